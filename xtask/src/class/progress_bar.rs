//! The class run's progress on stderr: a bar redrawn in place on a terminal, one line per
//! student otherwise (CI logs).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::lang::words::{Key, t, tf};

pub struct ProgressBar {
    total: usize,
    done: usize,
    running: usize,
    failed: usize,
    reused: usize,
    /// Students done before this run started: reused or missing.
    skipped: usize,
    jobs: usize,
    started: Instant,
    terminal: bool,
}

impl ProgressBar {
    /// A bar for `total` students of which `done` need no grading (`reused` of them graded by
    /// an earlier run, the others missing).
    pub fn new(total: usize, done: usize, reused: usize, jobs: usize) -> Self {
        let bar = Self {
            total,
            done,
            running: 0,
            failed: 0,
            reused,
            skipped: done,
            jobs,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
        };
        bar.draw();
        bar
    }

    pub fn started(&mut self) {
        self.running += 1;
        self.draw();
    }

    /// One student finished; `line` says how, for logs.
    pub fn finished(&mut self, failed: bool, line: &str) {
        self.running = self.running.saturating_sub(1);
        self.done += 1;
        self.failed += usize::from(failed);
        if self.terminal {
            self.draw();
        } else {
            eprintln!("[{}/{}] {line}", self.done, self.total);
        }
    }

    /// The time left: the pace so far applied to the students still to grade.
    fn left(&self) -> Option<Duration> {
        let graded = self.done - self.skipped;
        if graded == 0 {
            return None;
        }
        let per_student = self.started.elapsed() / graded as u32;
        Some(per_student * (self.total - self.done) as u32)
    }

    fn draw(&self) {
        if !self.terminal {
            return;
        }
        const WIDTH: usize = 30;
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let left = self.left().map_or_else(
            || t(Key::TimeLeftMeasuring).to_owned(),
            |left| tf(Key::AboutLeft, &[&human(left)]),
        );
        let counts = tf(
            Key::ClassProgress,
            &[
                &self.done,
                &self.total,
                &self.running,
                &self.failed,
                &self.reused,
                &left,
                &self.jobs,
            ],
        );
        // A progress bar stderr cannot take is left out: it must never stop the class run.
        crate::status::write_status(format_args!(
            "{}[{}{}] {counts}",
            crate::term::REDRAW_LINE,
            "#".repeat(filled),
            ".".repeat(WIDTH - filled),
        ));
    }

    /// Ends the bar's line.
    pub fn close(&self) {
        if self.terminal {
            eprintln!();
        }
    }
}

/// `42 s`, `3 min 5 s`.
pub fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 60 {
        tf(Key::Seconds, &[&seconds])
    } else {
        tf(Key::MinutesSeconds, &[&(seconds / 60), &(seconds % 60)])
    }
}
