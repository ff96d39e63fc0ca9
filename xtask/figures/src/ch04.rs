//! Chapter 4 — Deadlines and the total budget. One figure: the worst-case time of a few retry
//! policies, as a table computed with the solution's own `worst_case_time`, each row drawn as the
//! timeline of that worst case against a 30 s budget.
//!
//! The plotting library draws charts, not tables, so this module writes its SVG itself, in the
//! same house style (card, fonts, Okabe–Ito colours).

use std::time::Duration;

use ch04_deadlines_solution::{Policy, worst_case_time};

use crate::figure::{Figure, Lang};
use crate::plot::{Color, FONT_STACK, WIDTH, escape};

/// "This step must settle within 30 s": the budget every row is held to.
pub const BUDGET: Duration = Duration::from_secs(30);

const INK: &str = "#1f2328";
const MUTED: &str = "#59636e";
const RULE: &str = "#d1d9e0";
const GRIDLINE: &str = "#e8ebef";

const PAD: f64 = 20.0;
const ROW: f64 = 34.0;
const BAR: f64 = 14.0;
/// The right edges of the three number columns, and the span of the timelines.
const TIMEOUTS_RIGHT: f64 = 326.0;
const SLEEPS_RIGHT: f64 = 388.0;
const WORST_RIGHT: f64 = 446.0;
const BARS_LEFT: f64 = 466.0;
const BARS_RIGHT: f64 = WIDTH - PAD;
/// The timelines' scale, in seconds.
const SCALE_MAX: f64 = 80.0;

const ATTEMPT: Color = Color::Blue;
const SLEEP: Color = Color::Orange;
const OVER: Color = Color::Vermillion;

/// One row of the table: a policy and how the book describes it, in English and in Japanese.
pub struct Row {
    pub text: &'static str,
    pub ja: &'static str,
    pub policy: Policy,
}

impl Row {
    /// The row's description in `lang`.
    fn words(&self, lang: Lang) -> &'static str {
        lang.pick(self.text, self.ja)
    }
}

/// A duration given in seconds, exact to the millisecond.
fn secs(seconds: f64) -> Duration {
    Duration::from_millis((seconds * 1_000.0).round() as u64)
}

/// The policies of the table, in the order the book discusses them.
pub fn rows() -> Vec<Row> {
    vec![
        Row {
            text: "5 × 2 s, sleeps 0.2 s doubling",
            ja: "5 × 2 s、スリープ 0.2 s から倍々",
            policy: Policy::new(5, secs(2.0), [0.2, 0.4, 0.8, 1.6].map(secs)),
        },
        Row {
            text: "3 × 10 s, sleeps 1 s",
            ja: "3 × 10 s、スリープ 1 s",
            policy: Policy::fixed(3, secs(10.0), secs(1.0)),
        },
        Row {
            text: "3 × 5 s, sleeps 1 s then 2 s",
            ja: "3 × 5 s、スリープ 1 s、次に 2 s",
            policy: Policy::new(3, secs(5.0), [1.0, 2.0].map(secs)),
        },
        Row {
            text: "10 × 2 s, sleeps 1 s",
            ja: "10 × 2 s、スリープ 1 s",
            policy: Policy::fixed(10, secs(2.0), secs(1.0)),
        },
        Row {
            text: "8 × 2 s, sleeps 0.5 s doubling, cap 30 s",
            ja: "8 × 2 s、スリープ 0.5 s から倍々、上限 30 s",
            policy: Policy::new(
                8,
                secs(2.0),
                [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0].map(secs),
            ),
        },
    ]
}

/// The parts of a policy's worst case: (all attempts' timeouts, all sleeps between them).
pub fn parts(policy: &Policy) -> (Duration, Duration) {
    let timeouts = policy.per_attempt() * policy.max_attempts();
    (timeouts, worst_case_time(policy) - timeouts)
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![budget_table(lang)]
}

/// Seconds for a table cell: `13 s`, `0.5 s`, `77.5 s`.
fn show(duration: Duration) -> String {
    let text = format!("{:.1}", duration.as_secs_f64());
    format!("{} s", text.trim_end_matches(".0"))
}

/// A coordinate rounded to 0.1, without a trailing ".0".
fn px(value: f64) -> String {
    let tenths = (value * 10.0).round() as i64;
    match tenths % 10 {
        0 => format!("{}", tenths / 10),
        d => format!("{}.{}", tenths / 10, d.abs()),
    }
}

fn x_of(seconds: f64) -> f64 {
    BARS_LEFT + seconds / SCALE_MAX * (BARS_RIGHT - BARS_LEFT)
}

#[derive(Default)]
struct Svg(String);

impl Svg {
    fn text(&mut self, x: f64, y: f64, size: f64, fill: &str, extra: &str, content: &str) {
        push_line!(
            self.0,
            r#"<text x="{}" y="{}" font-size="{}" fill="{fill}"{extra}>{}</text>"#,
            px(x),
            px(y),
            px(size),
            escape(content),
        );
    }

    fn rect(&mut self, x: f64, y: f64, width: f64, height: f64, fill: &str) {
        push_line!(
            self.0,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            px(x),
            px(y),
            px(width),
            px(height),
        );
    }

    fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, extra: &str) {
        push_line!(
            self.0,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}"{extra}/>"#,
            px(x1),
            px(y1),
            px(x2),
            px(y2),
        );
    }
}

const END: &str = r#" text-anchor="end""#;
const BOLD: &str = r#" font-weight="600""#;

/// The timeline of one policy's worst case: attempt, sleep, attempt, …, drawn at row top `y`.
fn timeline(svg: &mut Svg, policy: &Policy, y: f64) {
    let mut at = 0.0;
    for attempt in 1..=policy.max_attempts() {
        let timeout = policy.per_attempt().as_secs_f64();
        svg.rect(
            x_of(at),
            y,
            x_of(at + timeout) - x_of(at),
            BAR,
            ATTEMPT.hex(),
        );
        at += timeout;
        if attempt < policy.max_attempts() {
            let sleep = policy.delay_after(attempt).as_secs_f64();
            svg.rect(x_of(at), y, x_of(at + sleep) - x_of(at), BAR, SLEEP.hex());
            at += sleep;
        }
    }
    // White separators between the segments, so each attempt can be counted.
    let mut at = 0.0;
    for attempt in 1..policy.max_attempts() {
        at += policy.per_attempt().as_secs_f64();
        svg.line((x_of(at), y), (x_of(at), y + BAR), "#ffffff", "");
        at += policy.delay_after(attempt).as_secs_f64();
        svg.line((x_of(at), y), (x_of(at), y + BAR), "#ffffff", "");
    }
}

/// `ch04-budget`: attempts × timeout + sleeps, for five policies, against a 30 s budget.
fn budget_table(lang: Lang) -> Figure {
    let title = lang.pick(
        "Worst case = attempts × timeout + sleeps, against a 30 s budget",
        "最悪ケース = 試行回数 × タイムアウト + スリープ（予算 30 s と比べる）",
    );
    let subtitle = lang.pick(
        [
            "Every attempt runs to its timeout (blue) and every sleep between two attempts is",
            "taken (orange); none follows the last. Computed with the solution's worst_case_time.",
        ],
        [
            "どの試行もタイムアウトまでかかり（青）、試行と試行の間のスリープもすべて取ります（橙）。",
            "最後の試行の後にスリープはありません。模範解答の worst_case_time で計算しました。",
        ],
    );
    let rows = rows();
    let header_top = PAD + 17.0 + 8.0 + subtitle.len() as f64 * 18.0 + 14.0;
    let body_top = header_top + 22.0;
    let axis_y = body_top + rows.len() as f64 * ROW + 4.0;
    let height = axis_y + 24.0 + 28.0;

    let mut svg = Svg::default();
    // The column headings.
    let heading = |svg: &mut Svg, x: f64, extra: &str, text: &str| {
        svg.text(x, header_top + 12.0, 12.5, MUTED, extra, text);
    };
    let right = format!("{END}{BOLD}");
    heading(
        &mut svg,
        PAD,
        BOLD,
        lang.pick(
            "attempts × timeout, sleeps",
            "試行 × タイムアウト、スリープ",
        ),
    );
    heading(
        &mut svg,
        TIMEOUTS_RIGHT,
        &right,
        lang.pick("timeouts", "タイムアウト"),
    );
    heading(
        &mut svg,
        SLEEPS_RIGHT,
        &right,
        lang.pick("+ sleeps", "+スリープ"),
    );
    heading(
        &mut svg,
        WORST_RIGHT,
        &right,
        lang.pick("= worst", "= 最悪"),
    );
    heading(
        &mut svg,
        BARS_LEFT,
        BOLD,
        lang.pick("the worst case as a timeline", "最悪ケースのタイムライン"),
    );
    svg.line(
        (PAD, header_top + 20.0),
        (WIDTH - PAD, header_top + 20.0),
        RULE,
        "",
    );

    // Vertical gridlines under the timelines, every 10 s, labelled every 20 s.
    for tick in (0..=80).step_by(10) {
        let x = x_of(f64::from(tick));
        svg.line((x, body_top), (x, axis_y), GRIDLINE, "");
        if tick % 20 == 0 {
            svg.text(
                x,
                axis_y + 14.0,
                11.5,
                MUTED,
                r#" text-anchor="middle""#,
                &format!("{tick}"),
            );
        }
    }
    svg.text(
        (BARS_LEFT + BARS_RIGHT) / 2.0,
        axis_y + 30.0,
        12.5,
        INK,
        r#" text-anchor="middle""#,
        lang.pick(
            "time since the first attempt started (s)",
            "最初の試行の開始からの時間（s）",
        ),
    );

    for (i, row) in rows.iter().enumerate() {
        let top = body_top + i as f64 * ROW;
        let baseline = top + ROW / 2.0 + 4.5;
        let (timeouts, sleeps) = parts(&row.policy);
        let worst = worst_case_time(&row.policy);
        let fits = worst <= BUDGET;
        svg.text(PAD, baseline, 12.5, INK, "", row.words(lang));
        svg.text(TIMEOUTS_RIGHT, baseline, 13.0, INK, END, &show(timeouts));
        svg.text(SLEEPS_RIGHT, baseline, 13.0, INK, END, &show(sleeps));
        let worst_fill = if fits { INK } else { OVER.hex() };
        svg.text(
            WORST_RIGHT,
            baseline,
            13.0,
            worst_fill,
            &format!("{END}{BOLD}"),
            &show(worst),
        );
        timeline(&mut svg, &row.policy, top + (ROW - BAR) / 2.0);
        let verdict = if fits {
            lang.pick("fits", "収まる").to_owned()
        } else {
            let over = show(worst - BUDGET);
            lang.pick(format!("{over} over"), format!("{over} 超過"))
        };
        let after = x_of(worst.as_secs_f64()) + 6.0;
        let (x, extra) = if after + 60.0 <= BARS_RIGHT {
            (after, String::new())
        } else {
            (BARS_RIGHT, END.to_owned())
        };
        let y = if after + 60.0 <= BARS_RIGHT {
            baseline
        } else {
            top + 3.0
        };
        let fill = if fits { MUTED } else { OVER.hex() };
        svg.text(x, y, 11.5, fill, &extra, &verdict);
        if i + 1 < rows.len() {
            svg.line(
                (PAD, top + ROW),
                (BARS_LEFT - 10.0, top + ROW),
                GRIDLINE,
                "",
            );
        }
    }

    // The budget, over every row.
    let budget_x = x_of(BUDGET.as_secs_f64());
    svg.line(
        (budget_x, body_top - 2.0),
        (budget_x, axis_y),
        OVER.hex(),
        r#" stroke-width="1.5" stroke-dasharray="5 3""#,
    );
    svg.text(
        budget_x + 4.0,
        body_top + 8.0,
        11.5,
        OVER.hex(),
        BOLD,
        lang.pick("budget 30 s", "予算 30 s"),
    );

    let mut out = String::new();
    push_line!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="figure-title figure-desc" font-family="{font}">"#,
        w = px(WIDTH),
        h = px(height),
        font = escape(FONT_STACK),
    );
    push_line!(out, r#"<title id="figure-title">{}</title>"#, escape(title));
    push_line!(
        out,
        r#"<desc id="figure-desc">{}</desc>"#,
        escape(&description(&rows, lang))
    );
    push_line!(
        out,
        r##"<rect x="0.5" y="0.5" width="{}" height="{}" rx="12" ry="12" fill="#ffffff" stroke="{RULE}"/>"##,
        px(WIDTH - 1.0),
        px(height - 1.0),
    );
    let mut head = Svg::default();
    head.text(PAD, PAD + 17.0, 17.0, INK, BOLD, title);
    for (i, line) in subtitle.iter().enumerate() {
        head.text(
            PAD,
            PAD + 17.0 + 8.0 + (i + 1) as f64 * 18.0 - 4.0,
            13.0,
            MUTED,
            "",
            line,
        );
    }
    out.push_str(&head.0);
    out.push_str(&svg.0);
    out.push_str("</svg>\n");
    Figure::new("ch04-budget", out)
}

/// The table in words, for screen readers.
fn description(rows: &[Row], lang: Lang) -> String {
    let mut text = lang
        .pick(
            "Worst-case time of each policy against a 30 s budget. ",
            "各ポリシーの最悪ケースの時間を予算 30 s と比べます。",
        )
        .to_owned();
    for row in rows {
        let (timeouts, sleeps) = parts(&row.policy);
        let (timeouts, sleeps) = (show(timeouts), show(sleeps));
        let worst = worst_case_time(&row.policy);
        let fits = worst <= BUDGET;
        let worst = show(worst);
        let words = row.words(lang);
        match lang {
            Lang::En => {
                let verdict = if fits { "fits" } else { "does not fit" };
                push_fmt!(
                    text,
                    "{words}: {timeouts} of timeouts plus {sleeps} of sleeps = {worst}, {verdict}. "
                );
            }
            Lang::Ja => {
                let verdict = if fits {
                    "収まります"
                } else {
                    "収まりません"
                };
                push_fmt!(
                    text,
                    "{words}: タイムアウト {timeouts} + スリープ {sleeps} = {worst} で、{verdict}。"
                );
            }
        }
    }
    text.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_cases_are_the_books() {
        let worst: Vec<String> = rows()
            .iter()
            .map(|row| show(worst_case_time(&row.policy)))
            .collect();
        assert_eq!(worst, ["13 s", "32 s", "18 s", "29 s", "77.5 s"]);
    }

    #[test]
    fn every_timeline_fits_the_scale() {
        for row in rows() {
            assert!(
                worst_case_time(&row.policy).as_secs_f64() <= SCALE_MAX,
                "{}",
                row.text
            );
        }
    }
}
