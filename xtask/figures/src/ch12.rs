//! Chapter 12 — Retry in one place. The figure and the table count the backend calls of one
//! user request with the reference solution's own `amplification`, so the book shows what the
//! tested code computes.
//!
//! The figure needs a logarithmic y axis, which the chart library does not draw, so it is a
//! [`diagram`]: axes, decade gridlines, one polyline per series and labels, laid out here.

use ch12_retry_in_one_place_solution::amplification;

use crate::figure::{Figure, Lang};
use crate::plot::{Color, Palette, diagram, escape, format_number};

/// The depths shown: stacks of 1 to 5 layers that retry.
const LAYERS: std::ops::RangeInclusive<usize> = 1..=5;
/// Attempts per layer for the curves of the figure.
const FIGURE_ATTEMPTS: [u32; 3] = [4, 3, 2];
/// Attempts per layer for the columns of the table.
const TABLE_ATTEMPTS: [u32; 4] = [2, 3, 4, 5];
/// The attempts of the one retrying layer when the stack retries in one place.
const ONE_PLACE: u32 = 4;

/// Decades on the y axis: 10^0 to 10^4 calls.
const DECADES: f64 = 4.0;
const PLOT_LEFT: f64 = 84.0;
const PLOT_RIGHT: f64 = 500.0;
const PLOT_TOP: f64 = 14.0;
const PLOT_HEIGHT: f64 = 300.0;
const X_PAD: f64 = 22.0;
const BODY_HEIGHT: f64 = PLOT_TOP + PLOT_HEIGHT + 48.0;

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![
        Figure::new("ch12-amplification", amplification_figure(lang)),
        Figure::markdown("ch12-amplification-table", amplification_table()),
    ]
}

/// The attempts of a stack of `layers` layers that each try `attempts` times.
fn every_layer(layers: usize, attempts: u32) -> Vec<u32> {
    vec![attempts; layers]
}

/// The same stack retrying in one place: the top layer tries `ONE_PLACE` times, the layers
/// below it once.
fn one_place(layers: usize) -> Vec<u32> {
    let mut attempts = vec![1; layers];
    attempts[0] = ONE_PLACE;
    attempts
}

fn count(calls: u64) -> String {
    format_number(calls as f64, 0)
}

/// `ch12-amplification-table`: backend calls for every depth and attempts per layer.
fn amplification_table() -> String {
    let mut text = String::new();
    push_line!(
        text,
        "**Backend calls for one user request** when the backend is down (every call fails), \
         computed with `amplification`:\n"
    );
    let mut header = "| layers that retry |".to_owned();
    let mut rule = "|---:|".to_owned();
    for attempts in TABLE_ATTEMPTS {
        push_fmt!(
            header,
            " {attempts} attempts each ({} {}) |",
            attempts - 1,
            if attempts == 2 { "retry" } else { "retries" }
        );
        rule.push_str("---:|");
    }
    push_line!(
        header,
        " retry in one place ({ONE_PLACE} attempts at the top only) |"
    );
    rule.push_str("---:|");
    text.push_str(&header);
    push_line!(text, "{rule}");
    for layers in LAYERS {
        push_fmt!(text, "| {layers} |");
        for attempts in TABLE_ATTEMPTS {
            let calls = count(amplification(&every_layer(layers, attempts)));
            // The two classic examples: SRE book ch. 22 and the Builders' Library.
            let classic = (layers, attempts) == (3, 4) || (layers, attempts) == (5, 3);
            if classic {
                push_fmt!(text, " **{calls}** |");
            } else {
                push_fmt!(text, " {calls} |");
            }
        }
        push_line!(text, " {} |", count(amplification(&one_place(layers))));
    }
    text
}

fn x(layers: usize) -> f64 {
    let span = (LAYERS.end() - LAYERS.start()) as f64;
    let width = PLOT_RIGHT - PLOT_LEFT - 2.0 * X_PAD;
    PLOT_LEFT + X_PAD + (layers - LAYERS.start()) as f64 / span * width
}

fn y(calls: u64) -> f64 {
    let bottom = PLOT_TOP + PLOT_HEIGHT;
    bottom - (calls.max(1) as f64).log10() / DECADES * PLOT_HEIGHT
}

fn text(body: &mut String, (px, py): (f64, f64), anchor: &str, style: &str, content: &str) {
    push_line!(
        body,
        r#"<text x="{px:.1}" y="{py:.1}" text-anchor="{anchor}" {style}>{}</text>"#,
        escape(content)
    );
}

fn small(fill: &str) -> String {
    format!(r#"font-size="{}" fill="{fill}""#, Palette::SMALL_FONT_SIZE)
}

fn label(fill: &str) -> String {
    format!(r#"font-size="{}" fill="{fill}""#, Palette::FONT_SIZE)
}

/// A label with a white outline, legible over lines.
fn halo(fill: &str) -> String {
    format!(
        r##"font-size="{}" fill="{fill}" stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke""##,
        Palette::SMALL_FONT_SIZE
    )
}

/// One series: a polyline through its points, a dot on each, and a label after the last.
fn series(body: &mut String, points: &[(usize, u64)], color: Color, dashed: bool, name: &str) {
    let coordinates: Vec<String> = points
        .iter()
        .map(|&(layers, calls)| format!("{:.1},{:.1}", x(layers), y(calls)))
        .collect();
    let dash = if dashed {
        r#" stroke-dasharray="7 4""#
    } else {
        ""
    };
    push_line!(
        body,
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-linejoin="round"{dash}/>"#,
        coordinates.join(" "),
        color.hex()
    );
    for &(layers, calls) in points {
        push_line!(
            body,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"/>"#,
            x(layers),
            y(calls),
            color.hex()
        );
    }
    if let Some(&(layers, calls)) = points.last() {
        let end = (x(layers) + 14.0, y(calls) + 4.0);
        let style = format!(r#"{} font-weight="600""#, label(color.hex()));
        text(
            body,
            end,
            "start",
            &style,
            &format!("{name}: {}", count(calls)),
        );
    }
}

/// A ring around a point and a note beside it.
fn callout(body: &mut String, (layers, calls): (usize, u64), at: (f64, f64), note: &str) {
    push_line!(
        body,
        r#"<circle cx="{:.1}" cy="{:.1}" r="7" fill="none" stroke="{}" stroke-width="1.5"/>"#,
        x(layers),
        y(calls),
        Palette::INK
    );
    text(body, at, "end", &halo(Palette::INK), note);
}

/// `ch12-amplification`: backend calls against the depth of the stack, on a log scale.
fn amplification_figure(lang: Lang) -> String {
    let mut body = String::new();
    let bottom = PLOT_TOP + PLOT_HEIGHT;
    for decade in 0..=DECADES as u32 {
        let calls = 10u64.pow(decade);
        let line_y = y(calls);
        push_line!(
            body,
            r#"<line x1="{PLOT_LEFT:.1}" y1="{line_y:.1}" x2="{PLOT_RIGHT:.1}" y2="{line_y:.1}" stroke="{}" stroke-width="1"/>"#,
            Palette::GRID
        );
        text(
            &mut body,
            (PLOT_LEFT - 8.0, line_y + 4.0),
            "end",
            &small(Palette::MUTED),
            &count(calls),
        );
    }
    push_line!(
        body,
        r#"<line x1="{PLOT_LEFT:.1}" y1="{bottom:.1}" x2="{PLOT_RIGHT:.1}" y2="{bottom:.1}" stroke="{}" stroke-width="1"/>"#,
        Palette::MUTED
    );
    for layers in LAYERS {
        text(
            &mut body,
            (x(layers), bottom + 18.0),
            "middle",
            &small(Palette::MUTED),
            &layers.to_string(),
        );
    }
    text(
        &mut body,
        ((PLOT_LEFT + PLOT_RIGHT) / 2.0, bottom + 40.0),
        "middle",
        &label(Palette::INK),
        lang.pick("layers in the stack", "スタックの層の数"),
    );
    push_line!(
        body,
        r#"<text x="0" y="0" text-anchor="middle" {} transform="translate(22 {:.1}) rotate(-90)">{}</text>"#,
        label(Palette::INK),
        PLOT_TOP + PLOT_HEIGHT / 2.0,
        escape(lang.pick(
            "backend calls per request (log scale)",
            "1 リクエストあたりのバックエンド呼び出し（対数目盛り）",
        ))
    );

    let colors = [Color::Vermillion, Color::Orange, Color::Blue];
    for (attempts, color) in FIGURE_ATTEMPTS.into_iter().zip(colors) {
        let points: Vec<(usize, u64)> = LAYERS
            .map(|layers| (layers, amplification(&every_layer(layers, attempts))))
            .collect();
        series(
            &mut body,
            &points,
            color,
            false,
            &lang.pick(
                format!("{attempts} attempts each"),
                format!("各層 {attempts} 回試行"),
            ),
        );
    }
    let flat: Vec<(usize, u64)> = LAYERS
        .map(|layers| (layers, amplification(&one_place(layers))))
        .collect();
    series(
        &mut body,
        &flat,
        Color::BluishGreen,
        true,
        lang.pick("retry in one place", "1 か所でリトライ"),
    );

    let sre = (3, amplification(&every_layer(3, 4)));
    callout(
        &mut body,
        sre,
        (x(sre.0) - 12.0, y(sre.1) - 10.0),
        &lang.pick(
            format!("SRE book: 4 · 4 · 4 = {}", count(sre.1)),
            format!("SRE 本: 4 · 4 · 4 = {}", count(sre.1)),
        ),
    );
    let builders = (5, amplification(&every_layer(5, 3)));
    text(
        &mut body,
        (x(builders.0) + 14.0, y(builders.1) + 19.0),
        "start",
        &small(Palette::MUTED),
        &lang.pick(
            format!("Builders' Library: 3⁵ = {}", count(builders.1)),
            format!("Builders' Library の例: 3⁵ = {}", count(builders.1)),
        ),
    );
    push_line!(
        body,
        r#"<circle cx="{:.1}" cy="{:.1}" r="7" fill="none" stroke="{}" stroke-width="1.5"/>"#,
        x(builders.0),
        y(builders.1),
        Palette::INK
    );

    diagram(
        lang.pick(
            "Retries multiply across layers",
            "リトライは層を重ねるごとに掛け算で増える",
        ),
        &lang.pick(
            format!(
                "Backend calls caused by one user request while the backend is down, when every \
                 layer of the stack makes 2, 3 or 4 attempts of its own. The y axis is \
                 logarithmic: each straight line is an exponential. The dashed line is the same \
                 stack retrying in one place: {ONE_PLACE} attempts at the top, one call per layer \
                 below. Computed with the solution's amplification()."
            ),
            format!(
                "バックエンドが落ちているとき、ユーザーの 1 リクエストが引き起こすバックエンド呼び出しの数です。\
                 スタックの各層がそれぞれ 2、3、4 回試行する場合を示します。縦軸は対数目盛りなので、\
                 直線はどれも指数関数です。破線は同じスタックが 1 か所でリトライする場合で、最上層で \
                 {ONE_PLACE} 回試行し、その下の各層は 1 回だけ呼び出します。模範解答の \
                 amplification() で計算しました。"
            ),
        ),
        BODY_HEIGHT,
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classic_examples_are_in_the_table() {
        let table = amplification_table();
        assert!(table.contains("**64**"));
        assert!(table.contains("**243**"));
        assert!(table.contains("| 5 | 32 | **243** | 1,024 | 3,125 | 4 |"));
    }

    #[test]
    fn retrying_in_one_place_is_flat() {
        for layers in LAYERS {
            assert_eq!(amplification(&one_place(layers)), u64::from(ONE_PLACE));
        }
    }

    #[test]
    fn every_point_fits_the_plot() {
        for attempts in FIGURE_ATTEMPTS {
            for layers in LAYERS {
                let calls = amplification(&every_layer(layers, attempts));
                assert!(calls <= 10u64.pow(DECADES as u32));
                assert!((PLOT_TOP..=PLOT_TOP + PLOT_HEIGHT).contains(&y(calls)));
            }
        }
    }
}
