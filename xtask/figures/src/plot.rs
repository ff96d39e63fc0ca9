//! A small, dependency-free SVG plotting library with one house style for every figure of the book.
//!
//! Two kinds of picture: a single [`Chart`] (histogram bars and lines with a legend, optional
//! vertical markers such as p50/p99) and a [`Grid`] of charts laid out in columns ("small
//! multiples"). Both are drawn on the same card: a white rounded rectangle, so a figure reads the
//! same in mdBook's light and dark themes, a system sans-serif font stack, and the Okabe–Ito
//! colour-blind-safe palette.
//!
//! Output is deterministic: coordinates are rounded to 0.1 px and printed with fixed precision,
//! tick values are computed from integers, and nothing depends on the clock, the locale or a hash
//! map's order. The same input always gives the same bytes.

use std::fmt::{self, Write as _};

/// Formatted text appended to a `String`: what `write!` does, without a `Result`, since writing
/// into a `String` cannot fail. The `push_line!` and `push_fmt!` macros (main.rs) call it.
pub trait PushFmt {
    fn push_fmt(&mut self, args: fmt::Arguments<'_>);
}

impl PushFmt for String {
    fn push_fmt(&mut self, args: fmt::Arguments<'_>) {
        self.write_fmt(args)
            .expect("writing to a String cannot fail");
    }
}

/// The width of every figure, in SVG user units (the viewBox is `0 0 720 height`).
pub const WIDTH: f64 = 720.0;

/// Latin faces first; a browser takes each glyph from the first face that has it, so the Japanese
/// faces after them draw the kana and kanji of the Japanese figures.
pub const FONT_STACK: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', 'Liberation Sans', 'Hiragino Sans', 'Hiragino Kaku Gothic ProN', 'Yu Gothic', Meiryo, 'Noto Sans CJK JP', 'Noto Sans JP', sans-serif";
const CARD_FILL: &str = "#ffffff";
const CARD_BORDER: &str = "#d1d9e0";
const INK: &str = "#1f2328";
const MUTED: &str = "#59636e";
const GRIDLINE: &str = "#e8ebef";
const AXIS_LINE: &str = "#8c959f";

const PAD: f64 = 20.0;
const TITLE_SIZE: f64 = 17.0;
const SUBTITLE_SIZE: f64 = 13.0;
const PANEL_TITLE_SIZE: f64 = 13.0;
const COLUMN_TITLE_SIZE: f64 = 14.0;
const LABEL_SIZE: f64 = 12.5;
const TICK_SIZE: f64 = 11.5;
const LEGEND_SIZE: f64 = 12.5;
const MARKER_SIZE: f64 = 11.5;

/// The fixed palette: Okabe and Ito's eight colours, safe for the common forms of colour
/// blindness. Yellow is pale on white; keep it for fills next to darker colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    Blue,
    Vermillion,
    BluishGreen,
    Orange,
    ReddishPurple,
    SkyBlue,
    #[allow(
        dead_code,
        reason = "the palette's eighth colour: no figure fills with it yet"
    )]
    Yellow,
    Black,
}

impl Color {
    /// The colour as an SVG hex string.
    pub fn hex(self) -> &'static str {
        match self {
            Color::Blue => "#0072B2",
            Color::Vermillion => "#D55E00",
            Color::BluishGreen => "#009E73",
            Color::Orange => "#E69F00",
            Color::ReddishPurple => "#CC79A7",
            Color::SkyBlue => "#56B4E9",
            Color::Yellow => "#F0E442",
            Color::Black => "#000000",
        }
    }
}

/// One axis: its label (say what is measured and in which unit, e.g. "delay before retry (ms)")
/// and an optional fixed range. Without a range, the axis covers the data, widened to round ticks.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Axis {
    label: String,
    min: Option<f64>,
    max: Option<f64>,
}

impl Axis {
    /// An axis with a label; an empty label draws none and frees its space.
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            min: None,
            max: None,
        }
    }

    /// Fixes both ends of the axis.
    pub fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    /// Fixes the lower end of the axis only.
    pub fn min(mut self, min: f64) -> Self {
        self.min = Some(min);
        self
    }
}

/// One histogram bin: `count` over `[start, end]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    pub start: f64,
    pub end: f64,
    pub count: f64,
}

/// Bars drawn from zero up to each bin's count.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    label: String,
    color: Color,
    bins: Vec<Bin>,
}

impl Histogram {
    /// A histogram from explicit bins. An empty label keeps it out of the legend.
    pub fn new(label: impl Into<String>, color: Color, bins: Vec<Bin>) -> Self {
        Self {
            label: label.into(),
            color,
            bins,
        }
    }

    /// A histogram of equal-width bins: bin `i` covers `[start + i·width, start + (i+1)·width]`.
    pub fn from_counts(
        label: impl Into<String>,
        color: Color,
        start: f64,
        width: f64,
        counts: &[u64],
    ) -> Self {
        let bins = counts
            .iter()
            .enumerate()
            .map(|(i, &count)| Bin {
                start: start + i as f64 * width,
                end: start + (i + 1) as f64 * width,
                count: count as f64,
            })
            .collect();
        Self::new(label, color, bins)
    }
}

/// A line through `points`, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    label: String,
    color: Color,
    points: Vec<(f64, f64)>,
    dashed: bool,
}

impl Line {
    /// A solid line. An empty label keeps it out of the legend.
    pub fn new(label: impl Into<String>, color: Color, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            color,
            points,
            dashed: false,
        }
    }

    /// Draws the line dashed, so it stays distinct in greyscale print.
    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
}

/// A labelled vertical line at `x`, e.g. a percentile or a bound.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    x: f64,
    label: String,
    color: Option<Color>,
}

impl Marker {
    /// A marker in the neutral ink colour.
    pub fn new(x: f64, label: impl Into<String>) -> Self {
        Self {
            x,
            label: label.into(),
            color: None,
        }
    }

    /// Draws the marker and its label in a palette colour.
    pub fn color(mut self, color: Color) -> Self {
        self.color = Some(color);
        self
    }

    fn hex(&self) -> &'static str {
        self.color.map_or(INK, Color::hex)
    }
}

/// One plot: histograms under lines under markers, with axes, ticks, a title and a legend.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    title: String,
    subtitle: String,
    x: Axis,
    y: Axis,
    histograms: Vec<Histogram>,
    lines: Vec<Line>,
    markers: Vec<Marker>,
    height: f64,
}

impl Chart {
    /// An empty chart. Standing alone, `title` heads the card; inside a [`Grid`], it heads the panel.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: String::new(),
            x: Axis::default(),
            y: Axis::default(),
            histograms: Vec::new(),
            lines: Vec::new(),
            markers: Vec::new(),
            height: 420.0,
        }
    }

    /// A sentence or two under the title of a standalone chart (wrapped to the card's width).
    pub fn subtitle(mut self, subtitle: impl Into<String>) -> Self {
        self.subtitle = subtitle.into();
        self
    }

    pub fn x_axis(mut self, axis: Axis) -> Self {
        self.x = axis;
        self
    }

    pub fn y_axis(mut self, axis: Axis) -> Self {
        self.y = axis;
        self
    }

    pub fn histogram(mut self, histogram: Histogram) -> Self {
        self.histograms.push(histogram);
        self
    }

    pub fn line(mut self, line: Line) -> Self {
        self.lines.push(line);
        self
    }

    pub fn marker(mut self, marker: Marker) -> Self {
        self.markers.push(marker);
        self
    }

    /// The height of a standalone chart's card (420 unless set).
    pub fn height(mut self, height: f64) -> Self {
        self.height = height;
        self
    }

    /// Renders the chart alone on a card.
    pub fn svg(&self) -> String {
        let header = Header::new(&self.title, &self.subtitle);
        let mut body = Svg::default();
        let area = Rect {
            x: PAD,
            y: header.height,
            width: WIDTH - 2.0 * PAD,
            height: self.height - header.height - PAD * 0.75,
        };
        let plot = PanelLayout::new(self, area, None);
        plot.draw(self, &mut body);
        card(&header, self.height, &body.0)
    }

    fn legend_entries(&self) -> Vec<LegendEntry<'_>> {
        let bars = self
            .histograms
            .iter()
            .filter(|h| !h.label.is_empty())
            .map(|h| LegendEntry {
                label: &h.label,
                color: h.color,
                swatch: Swatch::Bar,
            });
        let lines = self
            .lines
            .iter()
            .filter(|l| !l.label.is_empty())
            .map(|l| LegendEntry {
                label: &l.label,
                color: l.color,
                swatch: if l.dashed {
                    Swatch::DashedLine
                } else {
                    Swatch::Line
                },
            });
        bars.chain(lines).collect()
    }

    /// The data's extent along x and y, before any axis settings.
    fn data_extent(&self) -> (Extent, Extent) {
        let mut x = Extent::default();
        let mut y = Extent::default();
        for bin in self.histograms.iter().flat_map(|h| &h.bins) {
            x.add(bin.start);
            x.add(bin.end);
            y.add(0.0);
            y.add(bin.count);
        }
        for &(px, py) in self.lines.iter().flat_map(|l| &l.points) {
            x.add(px);
            y.add(py);
        }
        for marker in &self.markers {
            x.add(marker.x);
        }
        (x, y)
    }
}

/// A column of charts in a [`Grid`]: a heading, the charts stacked top to bottom, and the axis
/// labels they share.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    title: String,
    x_label: String,
    y_label: String,
    charts: Vec<Chart>,
}

impl Column {
    /// An untitled column of rates over time: seconds along, a count per second up.
    pub fn per_second(lang: crate::figure::Lang) -> Self {
        Self::new(
            "",
            lang.pick("seconds", "秒"),
            lang.pick("per second", "毎秒"),
        )
    }

    /// A column; its x label is drawn once under it, its y label once beside it.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            charts: Vec::new(),
        }
    }

    /// Adds a chart below the previous one. Its own axis labels are best left empty.
    pub fn chart(mut self, chart: Chart) -> Self {
        self.charts.push(chart);
        self
    }
}

/// Small multiples: columns of equally tall panels under one card title.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    title: String,
    subtitle: String,
    columns: Vec<Column>,
    panel_height: f64,
}

impl Grid {
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: String::new(),
            columns: Vec::new(),
            panel_height: 140.0,
        }
    }

    pub fn subtitle(mut self, subtitle: impl Into<String>) -> Self {
        self.subtitle = subtitle.into();
        self
    }

    pub fn column(mut self, column: Column) -> Self {
        self.columns.push(column);
        self
    }

    /// The height of every panel (140 unless set).
    pub fn panel_height(mut self, height: f64) -> Self {
        self.panel_height = height;
        self
    }

    /// Renders the grid on one card.
    pub fn svg(&self) -> String {
        const COLUMN_GAP: f64 = 28.0;
        let header = Header::new(&self.title, &self.subtitle);
        let rows = self
            .columns
            .iter()
            .map(|c| c.charts.len())
            .max()
            .unwrap_or(0);
        let has_titles = self.columns.iter().any(|c| !c.title.is_empty());
        let has_x_labels = self.columns.iter().any(|c| !c.x_label.is_empty());
        let title_band = if has_titles { 26.0 } else { 0.0 };
        let x_label_band = if has_x_labels { 24.0 } else { 0.0 };
        let height = header.height
            + title_band
            + rows as f64 * self.panel_height
            + x_label_band
            + PAD * 0.75;

        let count = self.columns.len().max(1) as f64;
        let column_width = (WIDTH - 2.0 * PAD - COLUMN_GAP * (count - 1.0)) / count;
        let mut body = Svg::default();
        for (i, column) in self.columns.iter().enumerate() {
            let left = PAD + i as f64 * (column_width + COLUMN_GAP);
            let top = header.height;
            if !column.title.is_empty() {
                body.text(
                    left,
                    top + COLUMN_TITLE_SIZE,
                    &TextStyle::new(fitted_size(
                        &column.title,
                        COLUMN_TITLE_SIZE,
                        true,
                        column_width,
                    ))
                    .bold(),
                    &column.title,
                );
            }
            let y_band = if column.y_label.is_empty() { 0.0 } else { 18.0 };
            let panels_top = top + title_band;
            let area = |row: usize| Rect {
                x: left + y_band,
                y: panels_top + row as f64 * self.panel_height,
                width: column_width - y_band,
                height: self.panel_height,
            };
            // One gutter for the whole column, so the plots line up under each other.
            let gutter = column
                .charts
                .iter()
                .enumerate()
                .map(|(row, chart)| {
                    let plot_height = PanelLayout::vertical(chart, area(row), true).plot_height();
                    y_tick_gutter(chart, plot_height)
                })
                .fold(0.0, f64::max);
            let mut plot_left = 0.0;
            let mut plot_right = 0.0;
            for (row, chart) in column.charts.iter().enumerate() {
                let area = area(row);
                let layout = PanelLayout::new(chart, area, Some(gutter));
                plot_left = layout.plot.x;
                plot_right = layout.plot.right();
                layout.draw(chart, &mut body);
            }
            let panels_bottom = panels_top + rows as f64 * self.panel_height;
            if !column.y_label.is_empty() {
                let middle = panels_top + rows as f64 * self.panel_height / 2.0;
                body.vertical_text(left + LABEL_SIZE, middle, LABEL_SIZE, &column.y_label);
            }
            if !column.x_label.is_empty() {
                body.text(
                    (plot_left + plot_right) / 2.0,
                    panels_bottom + 16.0,
                    &TextStyle::new(LABEL_SIZE).anchor(Anchor::Middle),
                    &column.x_label,
                );
            }
        }
        card(&header, height, &body.0)
    }
}

/// Tick positions along an axis and the number of decimals their labels need.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub values: Vec<f64>,
    pub decimals: usize,
}

impl Ticks {
    /// The labels, e.g. `["0", "250", "500"]` or `["0.05", "0.10"]`, with thousands separators.
    pub fn labels(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|&v| format_number(v, self.decimals))
            .collect()
    }
}

/// A round step, `m · 10^e` with `m` in {1, 2, 5}: mantissa and exponent kept as integers so the
/// tick values come out of exact arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    mantissa: i64,
    exponent: i32,
}

impl Step {
    /// The smallest round step that cuts `span` into at most `target` intervals.
    fn for_span(span: f64, target: usize) -> Self {
        let target = target.max(1) as f64;
        if !(span.is_finite() && span > 0.0) {
            return Self {
                mantissa: 1,
                exponent: 0,
            };
        }
        let raw = span / target;
        let mut exponent = 0;
        while pow10(exponent) > raw {
            exponent -= 1;
        }
        while pow10(exponent + 1) <= raw {
            exponent += 1;
        }
        for mantissa in [1, 2, 5] {
            let step = Self { mantissa, exponent };
            if step.value() >= raw {
                return step;
            }
        }
        Self {
            mantissa: 1,
            exponent: exponent + 1,
        }
    }

    fn value(self) -> f64 {
        self.multiple(1)
    }

    /// `k · step`, computed with one rounding only.
    fn multiple(self, k: i64) -> f64 {
        let n = (k * self.mantissa) as f64;
        if self.exponent >= 0 {
            n * pow10(self.exponent)
        } else {
            n / pow10(-self.exponent)
        }
    }

    fn decimals(self) -> usize {
        if self.exponent >= 0 {
            0
        } else {
            (-self.exponent) as usize
        }
    }
}

/// `10^e`, exact for the exponents a plot needs (the multiplications are exact up to 10^22).
fn pow10(e: i32) -> f64 {
    let mut value = 1.0;
    for _ in 0..e.unsigned_abs() {
        value *= 10.0;
    }
    if e < 0 { 1.0 / value } else { value }
}

/// Round ticks covering `[min, max]`: at most about `target` intervals, every tick a multiple of
/// 1, 2 or 5 times a power of ten, all inside the range.
#[cfg(test)]
pub fn ticks(min: f64, max: f64, target: usize) -> Ticks {
    let step = Step::for_span(max - min, target);
    ticks_with_step(min, max, step)
}

fn ticks_with_step(min: f64, max: f64, step: Step) -> Ticks {
    let s = step.value();
    let first = (min / s - 1e-9).ceil() as i64;
    let last = (max / s + 1e-9).floor() as i64;
    Ticks {
        values: (first..=last).map(|k| step.multiple(k)).collect(),
        decimals: step.decimals(),
    }
}

/// The axis range and its ticks: fixed ends stay, free ends widen to the next round tick.
fn axis_ticks(axis: &Axis, data: Extent, length: f64, spacing: f64) -> (f64, f64, Ticks) {
    let target = ((length / spacing).floor() as usize).clamp(2, 10);
    let (data_min, data_max) = data.bounds();
    let min = axis.min.unwrap_or(data_min);
    let mut max = axis.max.unwrap_or(data_max);
    if max <= min {
        max = min + 1.0;
    }
    // A free end widens to the next tick. Of `target` and one more tick, take the step that
    // wastes the least room: 0..215 gets 0..300 in steps of 100 rather than 0..400 in 200s.
    let widen = |step: Step| {
        let s = step.value();
        let lo = match axis.min {
            Some(_) => min,
            None => step.multiple((min / s + 1e-9).floor() as i64),
        };
        let hi = match axis.max {
            Some(_) => max,
            None => step.multiple((max / s - 1e-9).ceil() as i64),
        };
        (lo, hi, step)
    };
    let coarse = widen(Step::for_span(max - min, target));
    let fine = widen(Step::for_span(max - min, target + 1));
    let (lo, hi, step) = if fine.1 - fine.0 < coarse.1 - coarse.0 {
        fine
    } else {
        coarse
    };
    (lo, hi, ticks_with_step(lo, hi, step))
}

/// A line's points from a lab's seconds: second `t` (from 0) against `value` of its record.
pub fn per_second<T>(seconds: &[T], value: impl Fn(&T) -> u32) -> Vec<(f64, f64)> {
    (0..)
        .zip(seconds)
        .map(|(t, second)| (f64::from(t), f64::from(value(second))))
        .collect()
}

/// `value` with `decimals` digits after the point and thousands separators; never "-0".
pub fn format_number(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) if rest.chars().any(|c| c.is_ascii_digit() && c != '0') => ("-", rest),
        Some(rest) => ("", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    match fraction {
        Some(fraction) => format!("{sign}{grouped}.{fraction}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Escapes text for XML content and attribute values (the grader's JUnit writer uses it too).
pub use crate::xml::escape;

/// A coordinate rounded to 0.1 and printed without trailing ".0" (and never as "-0").
fn num(value: f64) -> String {
    let tenths = (value * 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    let tenths = tenths.unsigned_abs();
    match tenths % 10 {
        0 => format!("{sign}{}", tenths / 10),
        d => format!("{sign}{}.{d}", tenths / 10),
    }
}

/// A rough width of `text` at `size`: enough to lay out labels without measuring glyphs. A Latin
/// character counts a little over half an em; a Japanese one (kana, kanji, full-width punctuation)
/// a whole em.
pub fn text_width(text: &str, size: f64, bold: bool) -> f64 {
    let per_char = if bold { 0.6 } else { 0.56 };
    // A wide character takes two columns: the columns beyond one per character count them.
    let characters = text.chars().count();
    let wide = crate::width::columns(text) - characters;
    let narrow = characters - wide;
    narrow as f64 * size * per_char + wide as f64 * size
}

/// Punctuation that must not begin a line (Japanese line breaking keeps it with the text before).
fn closes(c: char) -> bool {
    "、。，．）」』】〉》・ー：；！？ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ%)]},.:;!?"
        .contains(c)
}

/// The font size at most `size` at which `text` fits `width` (by the rough measure), in steps of
/// half a pixel so the output stays tidy.
fn fitted_size(text: &str, size: f64, bold: bool, width: f64) -> f64 {
    let needed = text_width(text, size, bold);
    if needed <= width {
        return size;
    }
    ((size * width / needed) * 2.0).floor() / 2.0
}

/// Splits `text` into lines no wider than `width` (by the same rough measure). Lines break at
/// spaces, and also between two Japanese characters, never before closing punctuation.
fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    wrap_styled(text, size, false, width)
}

/// [`wrap`], for regular or bold text.
fn wrap_styled(text: &str, size: f64, bold: bool, width: f64) -> Vec<String> {
    // The text as units that stay together, each with whether a space preceded it.
    let mut units: Vec<(bool, String)> = Vec::new();
    let mut spaced = false;
    for c in text.chars() {
        if c.is_whitespace() {
            spaced = true;
            continue;
        }
        let joins = match units.last() {
            Some((_, last)) if !spaced => {
                let before = last.chars().last().unwrap_or(' ');
                closes(c) || !(crate::width::wide(c) || crate::width::wide(before))
            }
            _ => false,
        };
        if joins {
            if let Some((_, last)) = units.last_mut() {
                last.push(c);
            }
        } else {
            units.push((spaced, c.to_string()));
        }
        spaced = false;
    }
    let mut lines = Vec::new();
    let mut current = String::new();
    for (spaced, unit) in units {
        let candidate = if current.is_empty() {
            unit.clone()
        } else if spaced {
            format!("{current} {unit}")
        } else {
            format!("{current}{unit}")
        };
        if !current.is_empty() && text_width(&candidate, size, bold) > width {
            lines.push(std::mem::replace(&mut current, unit));
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

#[derive(Clone, Copy, Debug, Default)]
struct Extent {
    bounds: Option<(f64, f64)>,
}

impl Extent {
    fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.bounds = Some(match self.bounds {
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
            None => (v, v),
        });
    }

    fn bounds(self) -> (f64, f64) {
        self.bounds.unwrap_or((0.0, 1.0))
    }
}

#[derive(Clone, Copy, Debug)]
struct Rect {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

impl Rect {
    fn right(&self) -> f64 {
        self.x + self.width
    }

    fn bottom(&self) -> f64 {
        self.y + self.height
    }
}

/// The card's title and subtitle, each wrapped to the card's width, and the height they take.
struct Header {
    title: String,
    title_lines: Vec<String>,
    subtitle: Vec<String>,
    height: f64,
}

impl Header {
    fn new(title: &str, subtitle: &str) -> Self {
        let title_lines = wrap_styled(title, TITLE_SIZE, true, WIDTH - 2.0 * PAD);
        let subtitle = wrap(subtitle, SUBTITLE_SIZE, WIDTH - 2.0 * PAD);
        let height = PAD
            + TITLE_SIZE
            + Self::extra_title_height(title_lines.len())
            + 8.0
            + subtitle.len() as f64 * (SUBTITLE_SIZE + 5.0)
            + 12.0;
        Self {
            title: title.to_owned(),
            title_lines,
            subtitle,
            height,
        }
    }

    /// The room the title's lines after the first take.
    fn extra_title_height(lines: usize) -> f64 {
        lines.saturating_sub(1) as f64 * (TITLE_SIZE + 5.0)
    }
}

fn card(header: &Header, height: f64, body: &str) -> String {
    let h = num(height);
    let mut svg = String::new();
    push_line!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="figure-title figure-desc" font-family="{font}">"#,
        w = num(WIDTH),
        font = escape(FONT_STACK),
    );
    push_line!(
        svg,
        r#"<title id="figure-title">{}</title>"#,
        escape(&header.title)
    );
    push_line!(
        svg,
        r#"<desc id="figure-desc">{}</desc>"#,
        escape(&header.subtitle.join(" "))
    );
    push_line!(
        svg,
        r#"<rect x="0.5" y="0.5" width="{}" height="{}" rx="12" ry="12" fill="{CARD_FILL}" stroke="{CARD_BORDER}"/>"#,
        num(WIDTH - 1.0),
        num(height - 1.0),
    );
    let mut head = Svg::default();
    for (i, line) in header.title_lines.iter().enumerate() {
        head.text(
            PAD,
            PAD + TITLE_SIZE + i as f64 * (TITLE_SIZE + 5.0),
            &TextStyle::new(TITLE_SIZE).bold(),
            line,
        );
    }
    let title_bottom = PAD + TITLE_SIZE + Header::extra_title_height(header.title_lines.len());
    for (i, line) in header.subtitle.iter().enumerate() {
        head.text(
            PAD,
            title_bottom + 8.0 + (i + 1) as f64 * (SUBTITLE_SIZE + 5.0) - 4.0,
            &TextStyle::new(SUBTITLE_SIZE).fill(MUTED),
            line,
        );
    }
    svg.push_str(&head.0);
    svg.push_str(body);
    svg.push_str("</svg>\n");
    svg
}

/// A free-form figure on the house card: the title and subtitle on top, then `body`, SVG drawn
/// in a box [`WIDTH`] wide and `body_height` tall whose origin is its top-left corner. For the few
/// figures that are diagrams rather than charts; use [`INK`]-like colours from [`Palette`].
pub fn diagram(title: &str, subtitle: &str, body_height: f64, body: &str) -> String {
    let header = Header::new(title, subtitle);
    let inner = format!(
        "<g transform=\"translate(0 {})\">\n{body}</g>\n",
        num(header.height)
    );
    card(&header, header.height + body_height + PAD, &inner)
}

/// The house colours for text and lines in a [`diagram`].
pub struct Palette;

impl Palette {
    pub const INK: &'static str = INK;
    pub const MUTED: &'static str = MUTED;
    pub const BORDER: &'static str = CARD_BORDER;
    pub const GRID: &'static str = GRIDLINE;
    pub const FONT_SIZE: f64 = LABEL_SIZE;
    pub const SMALL_FONT_SIZE: f64 = TICK_SIZE;
}

/// `text` broken into lines that fit `width` at font `size`, as the charts wrap their titles.
pub fn wrap_lines(text: &str, size: f64, width: f64) -> Vec<String> {
    wrap(text, size, width)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    Start,
    Middle,
    End,
}

struct TextStyle {
    size: f64,
    bold: bool,
    anchor: Anchor,
    fill: &'static str,
    halo: bool,
}

impl TextStyle {
    fn new(size: f64) -> Self {
        Self {
            size,
            bold: false,
            anchor: Anchor::Start,
            fill: INK,
            halo: false,
        }
    }

    fn bold(mut self) -> Self {
        self.bold = true;
        self
    }

    fn anchor(mut self, anchor: Anchor) -> Self {
        self.anchor = anchor;
        self
    }

    fn fill(mut self, fill: &'static str) -> Self {
        self.fill = fill;
        self
    }

    /// A white outline behind the glyphs, so a label stays legible over bars and lines.
    fn halo(mut self) -> Self {
        self.halo = true;
        self
    }
}

/// An SVG fragment under construction; every element on its own line.
#[derive(Default)]
struct Svg(String);

impl Svg {
    fn text(&mut self, x: f64, y: f64, style: &TextStyle, content: &str) {
        let anchor = match style.anchor {
            Anchor::Start => "",
            Anchor::Middle => r#" text-anchor="middle""#,
            Anchor::End => r#" text-anchor="end""#,
        };
        let weight = if style.bold {
            r#" font-weight="600""#
        } else {
            ""
        };
        let halo = if style.halo {
            r##" stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke""##
        } else {
            ""
        };
        push_line!(
            self.0,
            r#"<text x="{}" y="{}" font-size="{}" fill="{}"{anchor}{weight}{halo}>{}</text>"#,
            num(x),
            num(y),
            num(style.size),
            style.fill,
            escape(content),
        );
    }

    fn vertical_text(&mut self, x: f64, y: f64, size: f64, content: &str) {
        push_line!(
            self.0,
            r#"<text x="0" y="0" font-size="{}" fill="{INK}" text-anchor="middle" transform="translate({} {}) rotate(-90)">{}</text>"#,
            num(size),
            num(x),
            num(y),
            escape(content),
        );
    }

    fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        push_line!(
            self.0,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            num(width),
        );
    }

    fn dashed_line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str, dash: &str) {
        push_line!(
            self.0,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="1.5" stroke-dasharray="{dash}"/>"#,
            num(from.0),
            num(from.1),
            num(to.0),
            num(to.1),
        );
    }

    fn rect(&mut self, rect: Rect, fill: &str, opacity: f64) {
        let opacity = if opacity < 1.0 {
            format!(r#" fill-opacity="{}""#, format_number(opacity, 2))
        } else {
            String::new()
        };
        push_line!(
            self.0,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"{opacity}/>"#,
            num(rect.x),
            num(rect.y),
            num(rect.width),
            num(rect.height),
        );
    }

    fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, dashed: bool) {
        let mut coordinates = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            if i > 0 {
                coordinates.push(' ');
            }
            coordinates.push_str(&num(x));
            coordinates.push(',');
            coordinates.push_str(&num(y));
        }
        let dash = if dashed {
            r#" stroke-dasharray="7 4""#
        } else {
            ""
        };
        push_line!(
            self.0,
            r#"<polyline points="{coordinates}" fill="none" stroke="{stroke}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"{dash}/>"#,
        );
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Swatch {
    Bar,
    Line,
    DashedLine,
}

struct LegendEntry<'a> {
    label: &'a str,
    color: Color,
    swatch: Swatch,
}

const SWATCH_WIDTH: f64 = 20.0;
const LEGEND_ROW: f64 = 20.0;

/// Lays legend entries left to right, wrapping within `width`; returns each entry's offset.
fn legend_positions(entries: &[LegendEntry<'_>], width: f64) -> Vec<(f64, usize)> {
    let mut positions = Vec::with_capacity(entries.len());
    let mut x = 0.0;
    let mut row = 0;
    for entry in entries {
        let entry_width = SWATCH_WIDTH + 6.0 + text_width(entry.label, LEGEND_SIZE, false);
        if x > 0.0 && x + entry_width > width {
            x = 0.0;
            row += 1;
        }
        positions.push((x, row));
        x += entry_width + 18.0;
    }
    positions
}

/// Lays marker labels above the plot, each on the first row where it overlaps no other label.
fn marker_rows(markers: &[Marker], centres: &[f64], plot: (f64, f64)) -> Vec<(f64, usize)> {
    let mut taken: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut placed = Vec::with_capacity(markers.len());
    for (marker, &centre) in markers.iter().zip(centres) {
        let width = text_width(&marker.label, MARKER_SIZE, false);
        let x = centre.clamp(plot.0 + width / 2.0, plot.1 - width / 2.0);
        let span = (x - width / 2.0 - 4.0, x + width / 2.0 + 4.0);
        let row = taken
            .iter()
            .position(|spans| spans.iter().all(|s| span.1 <= s.0 || span.0 >= s.1))
            .unwrap_or(taken.len());
        if row == taken.len() {
            taken.push(Vec::new());
        }
        taken[row].push(span);
        placed.push((x, row));
    }
    placed
}

/// The width a legend may take: the area less a generous allowance for the y gutter.
fn legend_width(area: Rect) -> f64 {
    area.width - 70.0
}

/// How many rows of marker labels `chart` needs above its plot in `area`. The plot's exact left
/// edge depends on the y ticks, which depend on the plot's height, which depends on this: so the
/// rows are counted on a close estimate of the plot's width.
fn estimated_marker_rows(chart: &Chart, area: Rect) -> usize {
    if chart.markers.is_empty() {
        return 0;
    }
    let plot = (area.x + 60.0, area.right() - 14.0);
    let (x_data, _) = chart.data_extent();
    let (lo, hi, _) = axis_ticks(&chart.x, x_data, plot.1 - plot.0, X_TICK_SPACING);
    let visible: Vec<Marker> = chart
        .markers
        .iter()
        .filter(|m| m.x >= lo && m.x <= hi)
        .cloned()
        .collect();
    let centres: Vec<f64> = visible
        .iter()
        .map(|m| plot.0 + (m.x - lo) / (hi - lo) * (plot.1 - plot.0))
        .collect();
    marker_rows(&visible, &centres, plot)
        .iter()
        .map(|&(_, row)| row + 1)
        .max()
        .unwrap_or(1)
}

const MARKER_ROW: f64 = 15.0;
/// Roughly one x tick per this many pixels, one y tick per `Y_TICK_SPACING`.
const X_TICK_SPACING: f64 = 48.0;
const Y_TICK_SPACING: f64 = 36.0;
const X_TICK_BAND: f64 = 20.0;
const X_LABEL_BAND: f64 = 20.0;
const Y_LABEL_BAND: f64 = 20.0;

/// The width the y tick labels of `chart` need when its plot is `plot_height` tall.
fn y_tick_gutter(chart: &Chart, plot_height: f64) -> f64 {
    let (_, y_data) = chart.data_extent();
    let (_, _, ticks) = axis_ticks(&chart.y, y_data, plot_height, Y_TICK_SPACING);
    ticks
        .labels()
        .iter()
        .map(|label| text_width(label, TICK_SIZE, false))
        .fold(0.0, f64::max)
        + 8.0
}

/// Where everything of one chart goes inside its area.
struct PanelLayout {
    area: Rect,
    title_y: f64,
    legend_y: f64,
    plot: Rect,
    x_range: (f64, f64),
    y_range: (f64, f64),
    x_ticks: Ticks,
    y_ticks: Ticks,
}

/// The vertical part of a panel's layout, which does not depend on the ticks.
struct Vertical {
    title_y: f64,
    legend_y: f64,
    plot_top: f64,
    plot_bottom: f64,
}

impl Vertical {
    fn plot_height(&self) -> f64 {
        self.plot_bottom - self.plot_top
    }
}

impl PanelLayout {
    fn vertical(chart: &Chart, area: Rect, titled: bool) -> Vertical {
        let top = area.y;
        let mut y = top;
        if titled {
            // Keeps a panel's title clear of the tick labels of the panel above it.
            y += 8.0;
        }
        let title_y = y + PANEL_TITLE_SIZE;
        if titled && !chart.title.is_empty() {
            y += PANEL_TITLE_SIZE + 8.0;
        }
        let entries = chart.legend_entries();
        let legend_y = y;
        if !entries.is_empty() {
            let rows = legend_positions(&entries, legend_width(area))
                .last()
                .map_or(0, |&(_, row)| row + 1);
            y += rows as f64 * LEGEND_ROW + 4.0;
        }
        y += estimated_marker_rows(chart, area) as f64 * MARKER_ROW + 6.0;
        let mut bottom = area.bottom() - X_TICK_BAND;
        if !chart.x.label.is_empty() {
            bottom -= X_LABEL_BAND;
        }
        Vertical {
            title_y,
            legend_y,
            plot_top: y,
            plot_bottom: bottom.max(y + 10.0),
        }
    }

    /// Lays out `chart` in `area`. A standalone chart (`gutter` is `None`) has its title on the
    /// card instead; a grid passes the y gutter shared by its column, so the plots line up.
    fn new(chart: &Chart, area: Rect, gutter: Option<f64>) -> Self {
        let titled = gutter.is_some();
        let vertical = Self::vertical(chart, area, titled);
        let plot_height = vertical.plot_height();
        let y_label_band = if chart.y.label.is_empty() {
            0.0
        } else {
            Y_LABEL_BAND
        };
        let gutter = gutter.unwrap_or_else(|| y_tick_gutter(chart, plot_height));
        let plot_left = area.x + y_label_band + gutter;
        let plot_right = area.right() - 14.0;
        let plot = Rect {
            x: plot_left,
            y: vertical.plot_top,
            width: plot_right - plot_left,
            height: plot_height,
        };
        let (x_data, y_data) = chart.data_extent();
        let (x_min, x_max, x_ticks) = axis_ticks(&chart.x, x_data, plot.width, X_TICK_SPACING);
        let (y_min, y_max, y_ticks) = axis_ticks(&chart.y, y_data, plot.height, Y_TICK_SPACING);
        Self {
            area,
            title_y: if titled { vertical.title_y } else { f64::NAN },
            legend_y: vertical.legend_y,
            plot,
            x_range: (x_min, x_max),
            y_range: (y_min, y_max),
            x_ticks,
            y_ticks,
        }
    }

    fn sx(&self, x: f64) -> f64 {
        let (lo, hi) = self.x_range;
        self.plot.x + (x - lo) / (hi - lo) * self.plot.width
    }

    fn sy(&self, y: f64) -> f64 {
        let (lo, hi) = self.y_range;
        self.plot.bottom() - (y - lo) / (hi - lo) * self.plot.height
    }

    fn clamp(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (
            x.clamp(self.plot.x, self.plot.right()),
            y.clamp(self.plot.y, self.plot.bottom()),
        )
    }

    fn draw(&self, chart: &Chart, svg: &mut Svg) {
        let plot = self.plot;
        if self.title_y.is_finite() && !chart.title.is_empty() {
            // Over the plot; a title too long for that moves left, over the y ticks.
            let width = text_width(&chart.title, PANEL_TITLE_SIZE, false);
            let x = plot.x.min(self.area.right() - width).max(self.area.x);
            svg.text(
                x,
                self.title_y,
                &TextStyle::new(PANEL_TITLE_SIZE),
                &chart.title,
            );
        }
        self.draw_legend(chart, svg);

        // Grid lines and y ticks.
        for (value, label) in self.y_ticks.values.iter().zip(self.y_ticks.labels()) {
            let y = self.sy(*value);
            svg.line((plot.x, y), (plot.right(), y), GRIDLINE, 1.0);
            svg.text(
                plot.x - 6.0,
                y + TICK_SIZE * 0.35,
                &TextStyle::new(TICK_SIZE).anchor(Anchor::End).fill(MUTED),
                &label,
            );
        }
        if !chart.y.label.is_empty() {
            svg.vertical_text(
                self.area.x + LABEL_SIZE,
                plot.y + plot.height / 2.0,
                LABEL_SIZE,
                &chart.y.label,
            );
        }

        for histogram in &chart.histograms {
            let opacity = if chart.histograms.len() > 1 { 0.7 } else { 1.0 };
            for bin in histogram.bins.iter().filter(|b| b.count > 0.0) {
                let (x0, top) = self.clamp((self.sx(bin.start), self.sy(bin.count)));
                let (x1, _) = self.clamp((self.sx(bin.end), plot.bottom()));
                let mut width = x1 - x0;
                let mut left = x0;
                if width > 4.0 {
                    left += 0.5;
                    width -= 1.0;
                }
                if width <= 0.0 {
                    continue;
                }
                let rect = Rect {
                    x: left,
                    y: top,
                    width,
                    height: plot.bottom() - top,
                };
                svg.rect(rect, histogram.color.hex(), opacity);
            }
        }

        for line in &chart.lines {
            let points: Vec<(f64, f64)> = line
                .points
                .iter()
                .map(|&(x, y)| self.clamp((self.sx(x), self.sy(y))))
                .collect();
            svg.polyline(&points, line.color.hex(), line.dashed);
        }

        // The x axis over the data, with its ticks and label.
        svg.line(
            (plot.x, plot.bottom()),
            (plot.right(), plot.bottom()),
            AXIS_LINE,
            1.0,
        );
        for (value, label) in self.x_ticks.values.iter().zip(self.x_ticks.labels()) {
            let x = self.sx(*value);
            svg.line((x, plot.bottom()), (x, plot.bottom() + 4.0), AXIS_LINE, 1.0);
            svg.text(
                x,
                plot.bottom() + 6.0 + TICK_SIZE,
                &TextStyle::new(TICK_SIZE).anchor(Anchor::Middle).fill(MUTED),
                &label,
            );
        }
        if !chart.x.label.is_empty() {
            svg.text(
                (plot.x + plot.right()) / 2.0,
                plot.bottom() + X_TICK_BAND + LABEL_SIZE + 2.0,
                &TextStyle::new(LABEL_SIZE).anchor(Anchor::Middle),
                &chart.x.label,
            );
        }

        self.draw_markers(chart, svg);
    }

    fn draw_legend(&self, chart: &Chart, svg: &mut Svg) {
        let entries = chart.legend_entries();
        let positions = legend_positions(&entries, legend_width(self.area));
        for (entry, &(dx, row)) in entries.iter().zip(&positions) {
            let x = self.plot.x + dx;
            let middle = self.legend_y + row as f64 * LEGEND_ROW + LEGEND_ROW / 2.0;
            let hex = entry.color.hex();
            match entry.swatch {
                Swatch::Bar => {
                    let rect = Rect {
                        x: x + 4.0,
                        y: middle - 6.0,
                        width: 12.0,
                        height: 12.0,
                    };
                    svg.rect(rect, hex, 1.0);
                }
                Swatch::Line => {
                    svg.polyline(&[(x, middle), (x + SWATCH_WIDTH, middle)], hex, false)
                }
                Swatch::DashedLine => {
                    svg.polyline(&[(x, middle), (x + SWATCH_WIDTH, middle)], hex, true);
                }
            }
            svg.text(
                x + SWATCH_WIDTH + 6.0,
                middle + LEGEND_SIZE * 0.35,
                &TextStyle::new(LEGEND_SIZE),
                entry.label,
            );
        }
    }

    fn draw_markers(&self, chart: &Chart, svg: &mut Svg) {
        let visible: Vec<Marker> = chart
            .markers
            .iter()
            .filter(|m| m.x >= self.x_range.0 && m.x <= self.x_range.1)
            .cloned()
            .collect();
        let centres: Vec<f64> = visible.iter().map(|m| self.sx(m.x)).collect();
        let placed = marker_rows(&visible, &centres, (self.plot.x, self.plot.right()));
        for ((marker, &x), &(label_x, row)) in visible.iter().zip(&centres).zip(&placed) {
            let label_y = self.plot.y - 6.0 - row as f64 * MARKER_ROW;
            svg.dashed_line(
                (x, label_y + 3.0),
                (x, self.plot.bottom()),
                marker.hex(),
                "4 3",
            );
            let style = TextStyle::new(MARKER_SIZE).anchor(Anchor::Middle).halo();
            let style = match marker.color {
                Some(color) => style.fill(color.hex()),
                None => style,
            };
            svg.text(label_x, label_y, &style, &marker.label);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// True if `v` is 1, 2 or 5 times a power of ten (or zero).
    fn is_round(v: f64) -> bool {
        if v == 0.0 {
            return true;
        }
        let mut m = v.abs();
        while m >= 10.0 {
            m /= 10.0;
        }
        while m < 1.0 {
            m *= 10.0;
        }
        [1.0, 2.0, 5.0, 10.0].iter().any(|r| (m - r).abs() < 1e-9)
    }

    #[test]
    fn ticks_are_round_and_evenly_spaced() {
        let cases = [
            (0.0, 500.0, 5),
            (0.0, 1000.0, 2),
            (0.0, 1.0, 4),
            (0.0, 0.37, 6),
            (-3.0, 17.0, 5),
            (13.0, 1287.0, 7),
            (0.0, 123_456.0, 6),
            (0.05, 0.5, 5),
        ];
        for (min, max, target) in cases {
            let t = ticks(min, max, target);
            assert!(t.values.len() >= 2, "{min}..{max}: {:?}", t.values);
            assert!(t.values.len() <= target + 1, "{min}..{max}: {:?}", t.values);
            let step = t.values[1] - t.values[0];
            assert!(is_round(step), "step {step} for {min}..{max}");
            for pair in t.values.windows(2) {
                assert!(((pair[1] - pair[0]) - step).abs() < step * 1e-9);
            }
            for v in &t.values {
                assert!(*v >= min - 1e-9 && *v <= max + 1e-9);
                let k = v / step;
                assert!(
                    (k - k.round()).abs() < 1e-6,
                    "{v} is not a multiple of {step}"
                );
            }
        }
    }

    #[test]
    fn tick_labels_have_fixed_decimals_and_separators() {
        assert_eq!(
            ticks(0.0, 500.0, 5).labels(),
            ["0", "100", "200", "300", "400", "500"]
        );
        assert_eq!(ticks(0.0, 0.3, 3).labels(), ["0.0", "0.1", "0.2", "0.3"]);
        assert_eq!(
            ticks(0.0, 3000.0, 3).labels(),
            ["0", "1,000", "2,000", "3,000"]
        );
        assert_eq!(format_number(-0.0001, 2), "0.00");
        assert_eq!(format_number(-1234.5, 1), "-1,234.5");
        assert_eq!(format_number(1_000_000.0, 0), "1,000,000");
    }

    #[test]
    fn free_axis_ends_widen_to_round_ticks() {
        let mut data = Extent::default();
        data.add(0.0);
        data.add(1_187.0);
        let (min, max, t) = axis_ticks(&Axis::new("x"), data, 600.0, 80.0);
        assert_eq!((min, max), (0.0, 1_200.0));
        assert_eq!(t.values.first(), Some(&0.0));
        assert_eq!(t.values.last(), Some(&1_200.0));
        let (min, max, _) = axis_ticks(&Axis::new("x").range(0.0, 500.0), data, 600.0, 80.0);
        assert_eq!((min, max), (0.0, 500.0));
    }

    #[test]
    fn coordinates_have_fixed_precision() {
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(-0.04), "0");
        assert_eq!(num(-2.25), "-2.3");
        assert_eq!(num(719.96), "720");
    }

    fn sample_chart() -> Chart {
        Chart::new("Retries <per> \"window\" & more")
            .subtitle("Tom's clients retry at 50 ms & 100 ms")
            .x_axis(Axis::new("time since failure (ms)"))
            .y_axis(Axis::new("retries per 10 ms window (calls)"))
            .histogram(Histogram::from_counts(
                "bars <a>",
                Color::Blue,
                0.0,
                10.0,
                &[3, 7, 0, 12],
            ))
            .line(
                Line::new(
                    "line & co",
                    Color::Vermillion,
                    vec![(0.0, 1.0), (35.0, 9.5)],
                )
                .dashed(),
            )
            .marker(Marker::new(12.0, "p50 <12>"))
            .marker(Marker::new(13.0, "p99 'late'").color(Color::BluishGreen))
    }

    #[test]
    fn output_is_deterministic() {
        let chart = sample_chart();
        assert_eq!(chart.svg(), chart.svg());
        assert_eq!(chart.svg(), sample_chart().svg());
        let grid = || {
            Grid::new("grid")
                .column(Column::new("left", "x (ms)", "y (clients)").chart(sample_chart()))
                .column(Column::new("right", "x (ms)", "").chart(sample_chart()))
                .svg()
        };
        assert_eq!(grid(), grid());
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape(r#"a < b && c > "d" 'e'"#),
            "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &apos;e&apos;"
        );
        let svg = sample_chart().svg();
        assert!(svg.contains("Retries &lt;per&gt; &quot;window&quot; &amp; more"));
        assert!(svg.contains("Tom&apos;s clients retry at 50 ms &amp; 100 ms"));
        assert!(svg.contains("p50 &lt;12&gt;"));
        assert!(svg.contains("bars &lt;a&gt;"));
        assert!(!svg.contains("<per>"));
        assert_well_formed(&svg);
    }

    #[test]
    fn one_card_and_one_style() {
        let svg = sample_chart().svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\""));
        assert_eq!(svg.matches("rx=\"12\"").count(), 1);
        assert!(svg.contains("sans-serif"));
        assert!(svg.contains(Color::Blue.hex()));
        assert!(svg.contains("stroke-dasharray=\"7 4\""));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn close_markers_get_separate_label_rows() {
        let markers = [Marker::new(0.0, "p50"), Marker::new(0.0, "p99")];
        let rows = marker_rows(&markers, &[100.0, 104.0], (0.0, 600.0));
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 1]);
        let rows = marker_rows(&markers, &[100.0, 400.0], (0.0, 600.0));
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 0]);
    }

    #[test]
    fn japanese_text_is_wider_and_wraps_between_characters() {
        assert_eq!(text_width("ab", 10.0, false), 2.0 * 10.0 * 0.56);
        assert_eq!(text_width("リトライ", 10.0, false), 40.0);
        let text =
            "各クライアントは同じ瞬間に失敗し、それぞれのリトライを上限まで待ちます。".repeat(4);
        let lines = wrap(&text, SUBTITLE_SIZE, 300.0);
        assert!(lines.len() > 1);
        assert!(
            lines
                .iter()
                .all(|l| text_width(l, SUBTITLE_SIZE, false) <= 300.0)
        );
        assert_eq!(
            lines.concat(),
            text,
            "no space is added between Japanese characters"
        );
        assert!(lines.iter().all(|l| !l.starts_with(['、', '。'])));
        let mixed = wrap("上限 500 ms でリトライ 0 から 4", SUBTITLE_SIZE, 1000.0);
        assert_eq!(mixed, ["上限 500 ms でリトライ 0 から 4"]);
    }

    #[test]
    fn long_subtitles_wrap() {
        let text = "word ".repeat(60);
        let lines = wrap(&text, SUBTITLE_SIZE, 300.0);
        assert!(lines.len() > 1);
        assert!(
            lines
                .iter()
                .all(|l| text_width(l, SUBTITLE_SIZE, false) <= 300.0)
        );
    }

    /// A small well-formedness check: tags balance and every `&` starts an entity.
    pub(crate) fn assert_well_formed(svg: &str) {
        let mut stack: Vec<&str> = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            assert_entities(text);
            let close = rest[open..].find('>').expect("unclosed tag") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
            assert_entities(tag);
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(name), "mismatched </{name}>");
            } else if !tag.ends_with('/') {
                let name = tag.split_whitespace().next().expect("empty tag");
                stack.push(name);
            }
            rest = &rest[close + 1..];
        }
        assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    }

    fn assert_entities(text: &str) {
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "bare '&' in {text:?}"
            );
        }
    }
}
