//! Chapter 1 — Retries are strong medicine. One figure, measured with the reference solution's
//! own `retry_immediately` against the chapter's `Flaky` stub: what each extra retry buys when
//! failures are independent, and what it costs when the service is down.

use ch01_strong_medicine_solution::retry_immediately;
use ch01_strong_medicine_solution::stubs::Flaky;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::Figure;
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

pub fn figures() -> Vec<Figure> {
    vec![dose_and_effect()]
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

fn panel(title: String, y_max: f64, flaky: Points, outage: Points) -> Chart {
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(MAX_RETRIES)))
        .y_axis(Axis::new("").range(0.0, y_max))
        .line(Line::new("30 % of calls fail, independently", FLAKY, flaky))
        .line(Line::new("outage: every call fails", OUTAGE, outage).dashed())
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
fn dose_and_effect() -> Figure {
    let (flaky_success, flaky_load) = sweep(INDEPENDENT);
    let (outage_success, outage_load) = sweep(1.0);
    let x_label = "max_retries (immediate retries allowed per request)";
    let success_title = format!(
        "with {PAGE_POLICY} retries: {} % vs {} % succeed",
        format_number(at_page_policy(&flaky_success), 1),
        format_number(at_page_policy(&outage_success), 0),
    );
    let load_title = format!(
        "with {PAGE_POLICY} retries: {} vs {} calls per request",
        format_number(at_page_policy(&flaky_load), 2),
        format_number(at_page_policy(&outage_load), 0),
    );
    let success = Column::new("What the retries buy", x_label, "requests that succeed (%)")
        .chart(panel(success_title, 100.0, flaky_success, outage_success));
    let load = Column::new("What the retries cost", x_label, "calls per request").chart(panel(
        load_title,
        f64::from(MAX_RETRIES + 1),
        flaky_load,
        outage_load,
    ));
    let grid = Grid::new("The dose and its effect: immediate retries with a hard cap")
        .subtitle(format!(
            "Each point: {} requests through the solution's retry_immediately, against \
             the Flaky stub (StdRng seed {SEED}). With independent failures the gain levels off \
             after two or three retries while the load stays below 1.43 calls per request; in an \
             outage nothing is gained and the load grows by one call per request with every \
             retry allowed.",
            format_number(f64::from(REQUESTS), 0),
        ))
        .column(success)
        .column(load)
        .panel_height(230.0);
    Figure::new("ch01-dose-and-effect", grid.svg())
}
