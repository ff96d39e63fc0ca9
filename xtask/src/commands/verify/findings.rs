//! What a verify found: problems, passes, what a skip left unproven, and where its gradings
//! spent their time. Steps running side by side send their lines to one printer.

use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;

use crate::report::model::Report;

/// Problems found so far, printed as they come (or sent to the thread that prints every step's
/// lines in order, when steps run side by side).
#[derive(Default)]
pub struct Findings {
    pub problems: Vec<String>,
    pub passed: usize,
    /// What could not be proven here because a check was skipped (no database, say).
    pub unproven: Vec<String>,
    /// Where lines go when they are not printed here: the step's index, and the printer.
    pub sent: Option<(usize, mpsc::Sender<Message>)>,
    /// Gradings done, and the time they spent compiling and running checks.
    pub graded: Spent,
}

/// Where a verify's gradings spent their time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spent {
    pub gradings: usize,
    pub reused_builds: usize,
    pub replayed_builds: usize,
    pub compile: Duration,
    pub run: Duration,
}

impl Spent {
    pub fn add(&mut self, report: &Report) {
        self.gradings += 1;
        self.reused_builds += usize::from(report.build_reused);
        self.replayed_builds += usize::from(report.build_replayed);
        self.compile += Duration::from_millis(report.compile_ms);
        self.run += Duration::from_millis(report.run_ms);
    }

    pub fn absorb(&mut self, other: Spent) {
        self.gradings += other.gradings;
        self.reused_builds += other.reused_builds;
        self.replayed_builds += other.replayed_builds;
        self.compile += other.compile;
        self.run += other.run;
    }

    /// `N gradings: compiling X s, checks Y s`.
    pub fn summary(&self) -> String {
        format!(
            "{} gradings ({} reused, {} compiled by rustc alone): compiling {:.1} s, running \
             checks {:.1} s",
            self.gradings,
            self.reused_builds,
            self.replayed_builds,
            self.compile.as_secs_f64(),
            self.run.as_secs_f64()
        )
    }
}

impl Findings {
    /// Findings of step `index`, whose lines go to `printer`.
    pub fn sent(index: usize, printer: mpsc::Sender<Message>) -> Self {
        Self {
            sent: Some((index, printer)),
            ..Self::default()
        }
    }

    /// Prints a line now, or sends it to the printer.
    pub fn line(&mut self, text: impl AsRef<str>) {
        match &self.sent {
            Some((index, printer)) => {
                // The printer outlives every step; a send can fail only once it is gone.
                let _ = printer.send(Message::Line(*index, text.as_ref().to_owned()));
            }
            None => println!("{}", text.as_ref()),
        }
    }

    /// Adds another set of findings (their lines already shown).
    pub fn absorb(&mut self, other: Findings) {
        self.problems.extend(other.problems);
        self.passed += other.passed;
        self.unproven.extend(other.unproven);
        self.graded.absorb(other.graded);
    }

    pub fn ok(&mut self, what: impl AsRef<str>) {
        self.passed += 1;
        self.line(format!("  ok    {}", what.as_ref()));
    }

    pub fn fail(&mut self, what: impl Into<String>) {
        let what = what.into();
        self.line(format!("  FAIL  {what}"));
        self.problems.push(what);
    }

    /// Something worth a look that is not a failure.
    pub fn note(&mut self, what: impl AsRef<str>) {
        self.line(format!("  note  {}", what.as_ref()));
    }

    pub fn unproven(&mut self, what: impl Into<String>) {
        let what = what.into();
        self.line(format!("  SKIP  {what}"));
        self.unproven.push(what);
    }

    pub fn require(&mut self, condition: bool, what: impl Into<String>) {
        if condition {
            self.ok(what.into());
        } else {
            self.fail(what);
        }
    }
}

/// What a step running beside others tells the printer.
pub enum Message {
    /// A line of step `index`.
    Line(usize, String),
    /// Step `index` is done: its findings (lines already sent) and how it ended.
    Done(usize, Findings, Result<()>),
}
