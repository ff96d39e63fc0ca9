//! What the grader is doing while it works, on stderr, so that a learner never waits in silence:
//! on a terminal one live line, redrawn in place (what runs, for how long, against which limit);
//! elsewhere (a pipe, a file, an editor's task runner) a plain line whenever the grader has been
//! quiet for a while, without escape codes. Never on stdout, which holds the report.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::lang::words;

/// How the status reaches stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nothing is shown.
    Off,
    /// One line, redrawn in place (stderr is a terminal that understands escape codes).
    Live,
    /// Plain lines, one each time the grader has been quiet for [`QUIET`].
    Lines,
}

impl Mode {
    /// The mode for stderr as it is: none unless `show`, live on a terminal, lines elsewhere.
    pub fn for_stderr(show: bool) -> Self {
        if !show {
            Mode::Off
        } else if stderr_is_live() {
            Mode::Live
        } else {
            Mode::Lines
        }
    }
}

/// Whether stderr is a terminal a status line can be redrawn on.
pub fn stderr_is_live() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
        && crate::sandbox::terminal_understands_ansi()
}

/// How long a plain-lines status stays quiet before it says what is still going on: the line
/// comes before two seconds of silence are up. The first comes sooner, as cargo may have taken
/// a while to start the grader.
pub const QUIET: Duration = Duration::from_millis(1_500);
const FIRST_QUIET: Duration = Duration::from_millis(1_000);

/// How often a live line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// When the grader last printed a plain status line (or started), and whether it has printed
/// one.
fn last_line() -> &'static Mutex<(Instant, bool)> {
    static LAST: OnceLock<Mutex<(Instant, bool)>> = OnceLock::new();
    LAST.get_or_init(|| Mutex::new((Instant::now(), false)))
}

/// Starts the quiet clock (call first thing in `main`): the first plain line comes before two
/// seconds after the grader started are up.
pub fn begin() {
    last_line();
}

/// Prints `line` on stderr as a plain line, and restarts the quiet clock.
fn print_line(line: &str) {
    let mut last = last_line()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    write_status(format_args!("{line}\n"));
    *last = (Instant::now(), true);
}

/// Set once stderr refused a status write (its reader gone, a full disk): the status then stays
/// silent, as it must never stop a grading nor complain of a closed pipe.
static SILENCED: AtomicBool = AtomicBool::new(false);

/// Writes status text (the status line, a progress bar) to stderr, unless stderr has refused it
/// before.
pub fn write_status(text: std::fmt::Arguments) {
    if SILENCED.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err.write_fmt(text).and_then(|()| err.flush()).is_err() {
        SILENCED.store(true, Ordering::Relaxed);
    }
}

/// Whether the grader has been quiet long enough for a plain status line.
fn quiet_enough(now: Instant) -> bool {
    let (last, printed) = *last_line()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let quiet = if printed { QUIET } else { FIRST_QUIET };
    now.saturating_duration_since(last) >= quiet
}

/// One piece of work the status follows, from [`Activity::start`] until it is dropped. A
/// thread beside it shows the headline, the time since it started, and what is running.
pub struct Activity {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the ticker when the activity ends.
    ended: Condvar,
}

struct State {
    mode: Mode,
    headline: String,
    detail: String,
    started: Instant,
    /// What is running now: a name, since when, and its time limit.
    running: Vec<(String, Instant, Duration)>,
    /// The live line as last drawn.
    drawn: String,
    over: bool,
}

impl Activity {
    /// Starts following a piece of work described by `headline`.
    pub fn start(mode: Mode, headline: impl Into<String>) -> Self {
        let now = Instant::now();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                mode,
                headline: headline.into(),
                detail: String::new(),
                started: now,
                running: Vec::new(),
                drawn: String::new(),
                over: false,
            }),
            ended: Condvar::new(),
        });
        let ticker = (mode != Mode::Off).then(|| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || tick(&shared))
        });
        Self { shared, ticker }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new headline, with the clock started again (the next step of the work).
    pub fn next(&self, headline: impl Into<String>) {
        let mut state = self.state();
        state.headline = headline.into();
        state.detail.clear();
        state.started = Instant::now();
    }

    /// A new headline for the same work, its clock running on.
    pub fn headline(&self, headline: impl Into<String>) {
        self.state().headline = headline.into();
    }

    /// What the headline's work is at now (say, how many crates cargo has compiled).
    pub fn detail(&self, detail: impl Into<String>) {
        self.state().detail = detail.into();
    }

    /// `name` started, and may take up to `limit`.
    pub fn begin(&self, name: &str, limit: Duration) {
        self.state()
            .running
            .push((name.to_owned(), Instant::now(), limit));
    }

    /// `name` is done.
    pub fn end(&self, name: &str) {
        self.state().running.retain(|(running, ..)| running != name);
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.state().over = true;
        self.shared.ended.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

/// The ticker's loop: redraws a live line, or prints a plain one after [`QUIET`], until the
/// activity ends; then clears the live line.
fn tick(shared: &Shared) {
    let mut state = shared
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    while !state.over {
        let now = Instant::now();
        match state.mode {
            Mode::Live => {
                let line = fit(&state.line(now), width());
                if line != state.drawn {
                    draw(&line);
                    state.drawn = line;
                }
            }
            Mode::Lines if quiet_enough(now) => print_line(&state.line(now)),
            Mode::Lines | Mode::Off => {}
        }
        state = shared
            .ended
            .wait_timeout(state, TICK)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .0;
    }
    if !state.drawn.is_empty() {
        draw("");
    }
}

impl State {
    /// The status line: the headline, the time since it started, the detail, and what runs,
    /// each with its time against its limit.
    fn line(&self, now: Instant) -> String {
        let mut line = format!(
            "{} · {}",
            self.headline,
            seconds(now.duration_since(self.started))
        );
        if !self.detail.is_empty() {
            line.push_str(" · ");
            line.push_str(&self.detail);
        }
        if !self.running.is_empty() {
            let running: Vec<String> = self
                .running
                .iter()
                .map(|(name, since, limit)| {
                    let spent = words::tf(
                        words::Key::TimeOfLimit,
                        &[&seconds(now.duration_since(*since)), &seconds(*limit)],
                    );
                    format!("{name} {spent}")
                })
                .collect();
            line.push_str(" · ");
            line.push_str(words::t(words::Key::Running));
            line.push(' ');
            line.push_str(&running.join(", "));
        }
        line
    }
}

/// A duration as the status shows it: `1.2 s`.
pub fn seconds(duration: Duration) -> String {
    let amount = format!("{:.1}", duration.as_secs_f64());
    words::tf(words::Key::Seconds, &[&amount])
}

/// `line` cut to fit `width` columns (a wrapped line could not be redrawn in place); a wide
/// character (Japanese) takes two.
fn fit(line: &str, width: usize) -> String {
    if words::columns(line) < width {
        return line.to_owned();
    }
    let room = width.saturating_sub(2);
    let mut cut = String::new();
    for c in line.chars() {
        if words::columns(&cut) + words::columns(c.encode_utf8(&mut [0; 4])) > room {
            break;
        }
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// Shows `line` as the one status line on stderr, in place of the last one.
fn draw(line: &str) {
    write_status(format_args!("{}{line}", crate::term::REDRAW_LINE));
}

/// Shows one status message with no clock (a step that says what it does): redrawn in place on
/// a terminal, a plain line elsewhere. An empty message clears a live line.
pub fn say(mode: Mode, message: &str) {
    match mode {
        Mode::Live => draw(&fit(message, width())),
        Mode::Lines if !message.is_empty() => print_line(message),
        Mode::Lines | Mode::Off => {}
    }
}

/// The terminal's width in columns: `COLUMNS`, the terminal's own size, or 80.
fn width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.parse().ok())
    {
        return columns;
    }
    crate::sandbox::terminal_columns().unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let now = Instant::now();
        State {
            mode: Mode::Off,
            headline: "Running 6 checks alone, 2 at a time (at most 6.0 s)".to_owned(),
            detail: String::new(),
            started: now,
            running: vec![("retry.one_place".to_owned(), now, Duration::from_secs(2))],
            drawn: String::new(),
            over: false,
        }
    }

    #[test]
    fn the_line_names_what_runs_and_its_time_against_its_limit() {
        let state = state();
        let line = state.line(state.started + Duration::from_millis(1_240));
        assert_eq!(
            line,
            "Running 6 checks alone, 2 at a time (at most 6.0 s) · 1.2 s · running \
             retry.one_place 1.2 s of 2.0 s"
        );
    }

    #[test]
    fn a_long_line_is_cut_to_the_width() {
        let cut = fit(&"x".repeat(100), 40);
        assert_eq!(cut.chars().count(), 39);
        assert!(cut.ends_with('…'));
        assert_eq!(fit("short", 40), "short");
    }
}
