//! Chapter 1 — Retries are strong medicine. One figure, measured with the reference solution's
//! own `retry_immediately` against the chapter's `Flaky` stub: what each extra retry buys when
//! failures are independent, and what it costs when the service is down.

use ch01_strong_medicine_solution::retry_immediately;
use ch01_strong_medicine_solution::stubs::Flaky;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number};

/// Requests sent for each point of the figure.
pub const REQUESTS: u32 = 20_000;
/// The largest `max_retries` on the x axis.
pub const MAX_RETRIES: u32 = 8;
/// The seed of the stub's coin.
pub const SEED: u64 = 1;
/// The failure probability of the independent case, as on the book page.
pub const INDEPENDENT: f64 = 0.3;
/// The policy of the book page, marked on both panels.
pub const PAGE_POLICY: u32 = 2;

/// The points of one line: `(max_retries, value)`.
type Points = Vec<(f64, f64)>;

const FLAKY: Color = Color::Blue;
const OUTAGE: Color = Color::Vermillion;

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![dose_and_effect(lang)]
}

/// What [`REQUESTS`] requests, each retried at once up to `max_retries` times, did to a service
/// whose calls fail independently with probability `p`: `(percent that succeeded, calls per
/// request)`.
pub fn measure(p: f64, max_retries: u32) -> (f64, f64) {
    let mut service = Flaky::new(p, StdRng::seed_from_u64(SEED));
    let mut succeeded = 0;
    for _ in 0..REQUESTS {
        if retry_immediately(max_retries, || service.call()).is_ok() {
            succeeded += 1;
        }
    }
    let requests = f64::from(REQUESTS);
    (
        100.0 * f64::from(succeeded) / requests,
        f64::from(service.calls()) / requests,
    )
}

/// `(success points, load points)` over `max_retries = 0..=MAX_RETRIES` for one service.
fn sweep(p: f64) -> (Points, Points) {
    (0..=MAX_RETRIES)
        .map(|max_retries| {
            let x = f64::from(max_retries);
            let (success, calls) = measure(p, max_retries);
            ((x, success), (x, calls))
        })
        .unzip()
}

fn panel(lang: Lang, title: String, y_max: f64, flaky: Points, outage: Points) -> Chart {
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(MAX_RETRIES)))
        .y_axis(Axis::new("").range(0.0, y_max))
        .line(Line::new(
            lang.pick(
                "30 % of calls fail, independently",
                "呼び出しの 30 % が独立に失敗",
            ),
            FLAKY,
            flaky,
        ))
        .line(
            Line::new(
                lang.pick("outage: every call fails", "障害: すべての呼び出しが失敗"),
                OUTAGE,
                outage,
            )
            .dashed(),
        )
        .marker(Marker::new(
            f64::from(PAGE_POLICY),
            format!("max_retries = {PAGE_POLICY}"),
        ))
}

/// The y value of `points` at `max_retries = PAGE_POLICY`.
fn at_page_policy(points: &[(f64, f64)]) -> f64 {
    points[PAGE_POLICY as usize].1
}

/// `ch01-dose-and-effect`: success rate and load against `max_retries`, for independent
/// failures and for a full outage.
fn dose_and_effect(lang: Lang) -> Figure {
    let (flaky_success, flaky_load) = sweep(INDEPENDENT);
    let (outage_success, outage_load) = sweep(1.0);
    let x_label = lang.pick(
        "max_retries (immediate retries allowed per request)",
        "max_retries（即時リトライの上限回数）",
    );
    let (flaky_percent, outage_percent) = (
        format_number(at_page_policy(&flaky_success), 1),
        format_number(at_page_policy(&outage_success), 0),
    );
    let success_title = lang.pick(
        format!("with {PAGE_POLICY} retries: {flaky_percent} % vs {outage_percent} % succeed"),
        format!("リトライ {PAGE_POLICY} 回: 成功 {flaky_percent} % 対 {outage_percent} %"),
    );
    let (flaky_calls, outage_calls) = (
        format_number(at_page_policy(&flaky_load), 2),
        format_number(at_page_policy(&outage_load), 0),
    );
    let load_title = lang.pick(
        format!("with {PAGE_POLICY} retries: {flaky_calls} vs {outage_calls} calls per request"),
        format!("リトライ {PAGE_POLICY} 回: 1 リクエストあたり {flaky_calls} 対 {outage_calls} 回"),
    );
    let success = Column::new(
        lang.pick("What the retries buy", "リトライで得られるもの"),
        x_label,
        lang.pick("requests that succeed (%)", "成功したリクエスト（%）"),
    )
    .chart(panel(
        lang,
        success_title,
        100.0,
        flaky_success,
        outage_success,
    ));
    let load = Column::new(
        lang.pick("What the retries cost", "リトライの代償"),
        x_label,
        lang.pick("calls per request", "1 リクエストあたりの呼び出し"),
    )
    .chart(panel(
        lang,
        load_title,
        f64::from(MAX_RETRIES + 1),
        flaky_load,
        outage_load,
    ));
    let requests = format_number(f64::from(REQUESTS), 0);
    let grid = Grid::new(lang.pick(
        "The dose and its effect: immediate retries with a hard cap",
        "薬の量と効き目: 回数に上限のある即時リトライ",
    ))
    .subtitle(lang.pick(
        format!(
            "Each point: {requests} requests through the solution's retry_immediately, against \
             the Flaky stub (StdRng seed {SEED}). With independent failures the gain levels off \
             after two or three retries while the load stays below 1.43 calls per request; in an \
             outage nothing is gained and the load grows by one call per request with every \
             retry allowed."
        ),
        format!(
            "各点は、模範解答の retry_immediately を通して Flaky スタブ（StdRng シード {SEED}）に\
             送った {requests} リクエストの結果です。失敗が独立なら、効果はリトライ 2〜3 回で頭打ちに\
             なり、負荷は 1 リクエストあたり 1.43 回未満にとどまります。障害中は何も得られず、\
             許すリトライが 1 回増えるごとに負荷が 1 リクエストあたり 1 回ずつ増えます。"
        ),
    ))
        .column(success)
        .column(load)
        .panel_height(230.0);
    Figure::new("ch01-dose-and-effect", grid.svg())
}
