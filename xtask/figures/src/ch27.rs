//! Chapter 27 — Metastable failures. Two figures and two tables, all from the given lab run with
//! the reference solution's `AdmissionQueue`: goodput over time for each setup, and a phase
//! diagram of which loads and trigger lengths the system recovers from.

use std::ops::Range;
use std::time::Duration;

use ch27_metastable_failures_solution::lab::{
    CAPACITY, JUDGED, SECONDS, Scenario, Second, Setup, TRIGGER_START, recovered, simulate,
};

use crate::figure::{Figure, Lang};
use crate::plot::{
    Axis, Chart, Color, Column, Grid, Line, Marker, Palette, diagram, escape, format_number,
    per_second,
};

/// The seed of every run.
const SEED: u64 = 1;
/// The run of the goodput figure: 80 % of capacity, capacity halved for 10 s.
const LOAD: f64 = 0.8;
const TRIGGER_SECONDS: u32 = 10;
/// The phase diagram's grid: loads from 20 % to 95 % of capacity, triggers from 0 to 20 s.
const LOADS: Range<u32> = 4..20;
const LOAD_STEP: f64 = 0.05;
const TRIGGERS: Range<u32> = 0..11;
const TRIGGER_STEP: u32 = 2;

fn label(setup: Setup, lang: Lang) -> &'static str {
    match setup {
        Setup::NoRetries => lang.pick("no retries", "リトライなし"),
        Setup::NaiveRetries => lang.pick("naive retries", "素朴なリトライ"),
        Setup::DropExpired => lang.pick(
            "retries + deadline drop",
            "リトライ + デッドライン切れの破棄",
        ),
        Setup::AdaptiveLifo => lang.pick(
            "retries + deadline drop + adaptive LIFO",
            "リトライ + デッドライン切れの破棄 + 適応的 LIFO",
        ),
        Setup::AllThree => lang.pick("retries + all three rules", "リトライ + 3 つの規則すべて"),
    }
}

/// A phase panel's title: short enough for half the card.
fn panel_title(setup: Setup, lang: Lang) -> &'static str {
    match setup {
        Setup::AllThree => lang.pick("the three rules", "3 つの規則"),
        other => label(other, lang),
    }
}

fn color(setup: Setup) -> Color {
    match setup {
        Setup::NoRetries => Color::Black,
        Setup::NaiveRetries => Color::Vermillion,
        Setup::DropExpired => Color::Orange,
        Setup::AdaptiveLifo => Color::SkyBlue,
        Setup::AllThree => Color::Blue,
    }
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    let scenario = Scenario {
        load: LOAD,
        trigger: Duration::from_secs(u64::from(TRIGGER_SECONDS)),
        seed: SEED,
    };
    let runs: Vec<(Setup, Vec<Second>)> = Setup::ALL
        .iter()
        .map(|&setup| (setup, simulate(setup, scenario)))
        .collect();
    let phases = [Setup::NaiveRetries, Setup::AllThree].map(|setup| (setup, phase(setup)));
    vec![
        goodput(lang, &runs),
        goodput_table(&runs),
        phase_diagram(lang, &phases),
        phase_table(&phases),
        numbers(&runs, &phases),
    ]
}

fn trigger_end() -> u32 {
    TRIGGER_START + TRIGGER_SECONDS
}

fn panel(
    lang: Lang,
    title: &str,
    runs: &[(Setup, Vec<Second>)],
    value: fn(&Second) -> u32,
) -> Chart {
    let mut chart = Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(SECONDS)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(
            f64::from(TRIGGER_START),
            lang.pick("capacity halved", "処理能力が半分に"),
        ))
        .marker(Marker::new(
            f64::from(trigger_end()),
            lang.pick("capacity back", "処理能力が回復"),
        ));
    for (setup, seconds) in runs {
        chart = chart.line(Line::new(
            label(*setup, lang),
            color(*setup),
            per_second(seconds, value),
        ));
    }
    chart
}

/// The mean of `value` per second over `range`.
fn mean(seconds: &[Second], range: Range<u32>, value: fn(&Second) -> u32) -> f64 {
    let len = f64::from(range.end - range.start);
    let total: u32 = seconds[range.start as usize..range.end as usize]
        .iter()
        .map(value)
        .sum();
    f64::from(total) / len
}

fn run(runs: &[(Setup, Vec<Second>)], setup: Setup) -> &[Second] {
    runs.iter()
        .find(|(s, _)| *s == setup)
        .map(|(_, seconds)| seconds.as_slice())
        .expect("every setup runs")
}

/// `ch27-goodput`: calls served in time, and attempts reaching the server, per second.
fn goodput(lang: Lang, runs: &[(Setup, Vec<Second>)]) -> Figure {
    let good = |s: &Second| s.goodput;
    let attempts = |s: &Second| s.attempts;
    let column = Column::per_second(lang)
        .chart(panel(
            lang,
            lang.pick(
                "Goodput: calls served before their deadline",
                "グッドプット: デッドラインまでに処理された呼び出し",
            ),
            runs,
            good,
        ))
        .chart(panel(
            lang,
            lang.pick(
                "Attempts reaching the server, retries included",
                "サーバーに届く試行（リトライを含む）",
            ),
            runs,
            attempts,
        ));
    let tail = SECONDS - JUDGED..SECONDS;
    let after = |setup: Setup| format_number(mean(run(runs, setup), tail.clone(), good), 0);
    let load = format_number(LOAD * 100.0, 0);
    let since = SECONDS - JUDGED - trigger_end();
    let (none, naive, drop, lifo, all) = (
        after(Setup::NoRetries),
        after(Setup::NaiveRetries),
        after(Setup::DropExpired),
        after(Setup::AdaptiveLifo),
        after(Setup::AllThree),
    );
    let offered = format_number(
        mean(run(runs, Setup::NoRetries), tail.clone(), |s| s.offered),
        0,
    );
    let grid = Grid::new(lang.pick(
        format!("Capacity halved for {TRIGGER_SECONDS} s under a load of {load} % of capacity"),
        format!("処理能力の {load} % の負荷の下で、処理能力が {TRIGGER_SECONDS} s の間半分になる"),
    ))
    .subtitle(lang.pick(
        format!(
            "One server, {CAPACITY} requests/s; 1 s deadlines, up to 3 attempts. Goodput per \
             second over the last {JUDGED} s, {since} s after the trigger ended: {none} without \
             retries, {naive} with naive retries, {drop} with the deadline drop, {lifo} with \
             adaptive LIFO added, {all} with all three rules; {offered} calls were started per \
             second."
        ),
        format!(
            "サーバー 1 台、毎秒 {CAPACITY} リクエスト。デッドライン 1 s、試行は最大 3 回。トリガーが\
             終わってから {since} s 後の、最後の {JUDGED} s の毎秒のグッドプットは、リトライなしで \
             {none}、素朴なリトライで {naive}、デッドライン切れの破棄で {drop}、さらに適応的 LIFO \
             で {lifo}、3 つの規則すべてで {all} でした。呼び出しは毎秒 {offered} 件始まりました。"
        ),
    ))
    .column(column)
    .panel_height(320.0);
    Figure::new("ch27-goodput", grid.svg())
}

/// `ch27-goodput-table`: per-second means over the trigger, the ten seconds after it, and the
/// judged tail, for the page to quote.
fn goodput_table(runs: &[(Setup, Vec<Second>)]) -> Figure {
    let trigger = TRIGGER_START..trigger_end();
    let after = trigger_end()..trigger_end() + 10;
    let tail = SECONDS - JUDGED..SECONDS;
    let mut text = format!(
        "| setup | trigger ({}–{} s): attempts/s | goodput/s | next 10 s: attempts/s | goodput/s | last {JUDGED} s: attempts/s | goodput/s |\n|---|---:|---:|---:|---:|---:|---:|\n",
        trigger.start, trigger.end
    );
    for (setup, seconds) in runs {
        let cell = |range: Range<u32>, value: fn(&Second) -> u32| {
            format_number(mean(seconds, range, value), 0)
        };
        push_line!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} |",
            label(*setup, Lang::En),
            cell(trigger.clone(), |s| s.attempts),
            cell(trigger.clone(), |s| s.goodput),
            cell(after.clone(), |s| s.attempts),
            cell(after.clone(), |s| s.goodput),
            cell(tail.clone(), |s| s.attempts),
            cell(tail.clone(), |s| s.goodput),
        );
    }
    Figure::markdown("ch27-goodput-table", text)
}

/// One setup's phase diagram: for each load (rows, lowest first) and trigger length (columns),
/// whether the run recovered.
struct Phase {
    rows: Vec<(f64, Vec<bool>)>,
}

fn load_of(step: u32) -> f64 {
    f64::from(step) * LOAD_STEP
}

fn trigger_of(step: u32) -> u32 {
    step * TRIGGER_STEP
}

fn phase(setup: Setup) -> Phase {
    let rows = LOADS
        .map(|l| {
            let cells = TRIGGERS
                .map(|t| {
                    let scenario = Scenario {
                        load: load_of(l),
                        trigger: Duration::from_secs(u64::from(trigger_of(t))),
                        seed: SEED,
                    };
                    recovered(&simulate(setup, scenario))
                })
                .collect();
            (load_of(l), cells)
        })
        .collect();
    Phase { rows }
}

impl Phase {
    fn stuck(&self) -> usize {
        self.rows
            .iter()
            .map(|(_, cells)| cells.iter().filter(|ok| !**ok).count())
            .sum()
    }

    fn cells(&self) -> usize {
        self.rows.iter().map(|(_, cells)| cells.len()).sum()
    }

    /// The lowest load at which some trigger leaves the system down.
    fn lowest_stuck_load(&self) -> Option<f64> {
        self.rows
            .iter()
            .find(|(_, cells)| cells.iter().any(|ok| !ok))
            .map(|(load, _)| *load)
    }

    /// The shortest trigger that leaves the system down at the highest load.
    fn shortest_stuck_trigger(&self) -> Option<u32> {
        let (_, top) = self.rows.last()?;
        (0..)
            .zip(top)
            .find(|(_, ok)| !**ok)
            .map(|(t, _)| trigger_of(t))
    }
}

fn percent(load: f64) -> String {
    format!("{} %", format_number(load * 100.0, 0))
}

const CELL_W: f64 = 26.0;
const CELL_H: f64 = 16.0;
const PANEL_LEFT: [f64; 2] = [72.0, 402.0];
const TOP: f64 = 30.0;

fn text(body: &mut String, x: f64, y: f64, anchor: &str, size: f64, content: &str) {
    push_line!(
        body,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="{size}" fill="{}">{}</text>"#,
        Palette::INK,
        escape(content)
    );
}

/// `ch27-phase`: two grids of coloured cells, load against trigger length.
fn phase_diagram(lang: Lang, phases: &[(Setup, Phase); 2]) -> Figure {
    let rows = LOADS.len() as f64;
    let columns = TRIGGERS.len() as f64;
    let height = TOP + rows * CELL_H + 70.0;
    let mut body = String::new();
    for ((setup, phase), left) in phases.iter().zip(PANEL_LEFT) {
        let width = columns * CELL_W;
        text(
            &mut body,
            left + width / 2.0,
            16.0,
            "middle",
            Palette::FONT_SIZE,
            &{
                let (title, stuck, cells) =
                    (panel_title(*setup, lang), phase.stuck(), phase.cells());
                lang.pick(
                    format!("{title}: {stuck} of {cells} stay down"),
                    format!("{title}: {cells} 回中 {stuck} 回が落ちたまま"),
                )
            },
        );
        for (i, (load, cells)) in phase.rows.iter().enumerate() {
            // The highest load on top.
            let y = TOP + (rows - 1.0 - i as f64) * CELL_H;
            for (j, ok) in cells.iter().enumerate() {
                let fill = if *ok {
                    Color::BluishGreen.hex()
                } else {
                    Color::Vermillion.hex()
                };
                push_line!(
                    body,
                    r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="#ffffff" stroke-width="1"/>"##,
                    left + j as f64 * CELL_W,
                    CELL_W,
                    CELL_H,
                );
            }
            if i % 2 == 0 {
                text(
                    &mut body,
                    left - 6.0,
                    y + CELL_H - 4.0,
                    "end",
                    Palette::SMALL_FONT_SIZE,
                    &percent(*load),
                );
            }
        }
        let bottom = TOP + rows * CELL_H;
        for t in TRIGGERS.step_by(2) {
            text(
                &mut body,
                left + (f64::from(t) + 0.5) * CELL_W,
                bottom + 14.0,
                "middle",
                Palette::SMALL_FONT_SIZE,
                &trigger_of(t).to_string(),
            );
        }
        text(
            &mut body,
            left + width / 2.0,
            bottom + 32.0,
            "middle",
            Palette::FONT_SIZE,
            lang.pick(
                "trigger length (s of halved capacity)",
                "トリガーの長さ（処理能力が半分の秒数）",
            ),
        );
    }
    let legend_y = TOP + rows * CELL_H + 54.0;
    for (i, (fill, words)) in [
        (
            Color::BluishGreen,
            lang.pick(
                "recovers: 90 % of calls served in time at the end",
                "回復: 最後に呼び出しの 90 % が期限内に処理される",
            ),
        ),
        (
            Color::Vermillion,
            lang.pick(
                "stays down long after the trigger",
                "トリガーの後も長く落ちたまま",
            ),
        ),
    ]
    .iter()
    .enumerate()
    {
        let x = PANEL_LEFT[0] + i as f64 * 330.0;
        push_line!(
            body,
            r#"<rect x="{x:.1}" y="{:.1}" width="14" height="12" fill="{}"/>"#,
            legend_y - 10.0,
            fill.hex()
        );
        text(
            &mut body,
            x + 20.0,
            legend_y,
            "start",
            Palette::SMALL_FONT_SIZE,
            words,
        );
    }
    push_line!(
        body,
        r#"<text x="0" y="0" text-anchor="middle" font-size="{}" fill="{}" transform="translate(18 {:.1}) rotate(-90)">{}</text>"#,
        Palette::FONT_SIZE,
        Palette::INK,
        TOP + rows * CELL_H / 2.0,
        escape(lang.pick("load (share of capacity)", "負荷（処理能力に対する割合）")),
    );
    let [(_, naive), (_, fixed)] = phases;
    let (stuck, cells) = (naive.stuck(), naive.cells());
    let from = naive.lowest_stuck_load();
    let subtitle = match lang {
        Lang::En => format!(
            "Each cell is one run: calls started at that share of the server's {CAPACITY} \
             requests/s, capacity halved for that long. With naive retries, {stuck} of {cells} \
             runs stay down, from a load of {}; with the three rules on the server, {}.",
            from.map_or_else(|| "nowhere".to_owned(), percent),
            match fixed.stuck() {
                0 => "every run recovers".to_owned(),
                n => format!("{n} do"),
            }
        ),
        Lang::Ja => format!(
            "各マスが 1 回の実行です。サーバーの処理能力（毎秒 {CAPACITY} リクエスト）に対してその\
             割合で呼び出しを始め、その長さだけ処理能力を半分にします。素朴なリトライでは {cells} \
             回中 {stuck} 回が落ちたままで、{}。サーバーに 3 つの規則を入れると{}。",
            from.map_or_else(
                || "どの負荷でも落ちたままにはなりません".to_owned(),
                |load| format!("負荷 {} から起こります", percent(load))
            ),
            match fixed.stuck() {
                0 => "、すべての実行が回復します".to_owned(),
                n => format!("、落ちたままは {n} 回です"),
            }
        ),
    };
    Figure::new(
        "ch27-phase",
        diagram(
            lang.pick(
                "Where the system recovers: load against trigger length",
                "システムが回復する範囲: 負荷とトリガーの長さ",
            ),
            &subtitle,
            height,
            &body,
        ),
    )
}

/// `ch27-phase-table`: the phase diagrams' counts, for the page to quote.
fn phase_table(phases: &[(Setup, Phase); 2]) -> Figure {
    let mut text = String::from(
        "| setup | runs that stay down | lowest load that stays down | at 95 %: shortest trigger that leaves it down |\n|---|---:|---:|---:|\n",
    );
    for (setup, phase) in phases {
        push_line!(
            text,
            "| {} | {} of {} | {} | {} |",
            label(*setup, Lang::En),
            phase.stuck(),
            phase.cells(),
            phase
                .lowest_stuck_load()
                .map_or_else(|| "none".to_owned(), percent),
            phase
                .shortest_stuck_trigger()
                .map_or_else(|| "none".to_owned(), |t| format!("{t} s")),
        );
    }
    Figure::markdown("ch27-phase-table", text)
}

/// `ch27-numbers`: the numbers the page's prose quotes, each between anchors.
fn numbers(runs: &[(Setup, Vec<Second>)], phases: &[(Setup, Phase); 2]) -> Figure {
    let mut text = String::from(
        "Generated by `cargo xtask figures` from the runs of ch27-goodput and ch27-phase: the\n\
         numbers that the prose of ch27-metastable-failures.md quotes, each between anchors.\n",
    );
    let mut anchor = |name: &str, value: String| {
        push_line!(text, "ANCHOR: {name}\n{value}\nANCHOR_END: {name}");
    };
    let trigger = TRIGGER_START..trigger_end();
    let after = trigger_end()..trigger_end() + 10;
    let tail = SECONDS - JUDGED..SECONDS;
    let per_second = |setup: Setup, range: Range<u32>, value: fn(&Second) -> u32| {
        format_number(mean(run(runs, setup), range, value), 0)
    };
    anchor("load", format_number(LOAD * 100.0, 0));
    anchor("trigger", TRIGGER_SECONDS.to_string());
    anchor(
        "tail_starts",
        (SECONDS - JUDGED - trigger_end()).to_string(),
    );
    anchor("judged", JUDGED.to_string());
    anchor(
        "offered",
        per_second(Setup::NoRetries, tail.clone(), |s| s.offered),
    );
    for (setup, name) in [
        (Setup::NoRetries, "none"),
        (Setup::NaiveRetries, "naive"),
        (Setup::DropExpired, "drop"),
        (Setup::AdaptiveLifo, "lifo"),
        (Setup::AllThree, "all"),
    ] {
        let good = |s: &Second| s.goodput;
        let attempts = |s: &Second| s.attempts;
        anchor(
            &format!("{name}_trigger_goodput"),
            per_second(setup, trigger.clone(), good),
        );
        anchor(
            &format!("{name}_trigger_attempts"),
            per_second(setup, trigger.clone(), attempts),
        );
        anchor(
            &format!("{name}_after_goodput"),
            per_second(setup, after.clone(), good),
        );
        anchor(
            &format!("{name}_tail_goodput"),
            per_second(setup, tail.clone(), good),
        );
        anchor(
            &format!("{name}_tail_attempts"),
            per_second(setup, tail.clone(), attempts),
        );
        anchor(
            &format!("{name}_tail_served"),
            per_second(setup, tail.clone(), |s| s.served),
        );
    }
    let [(_, naive), (_, fixed)] = phases;
    anchor("cells", naive.cells().to_string());
    anchor("naive_stuck", naive.stuck().to_string());
    anchor("fixed_stuck", fixed.stuck().to_string());
    anchor(
        "naive_lowest_load",
        naive
            .lowest_stuck_load()
            .map_or_else(|| "none".to_owned(), percent),
    );
    anchor(
        "naive_shortest_trigger",
        naive
            .shortest_stuck_trigger()
            .map_or_else(|| "none".to_owned(), |t| t.to_string()),
    );
    Figure::markdown("ch27-numbers", text)
}
