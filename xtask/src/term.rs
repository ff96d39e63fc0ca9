//! The grader's colours and the few cursor codes its live screens use. Colours are `anstyle`
//! styles written through `anstream`, which decides for each stream whether it takes colour
//! (`NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`, `TERM=dumb`, a pipe or a file, an old Windows
//! console) and strips the colour, or turns it into console calls, where it does not.

use std::fmt::Display;
use std::io::Write;

use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Effects};

/// Redraws the current line: back to its start and clear it (the live status line, the class
/// run's progress bar). Cursor control, not colour: written only where the caller knows the
/// stream is a terminal.
pub const REDRAW_LINE: &str = "\r\x1b[2K";

/// Clears the screen and moves to its top, as a terminal does for a fresh run (`watch`).
pub const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

/// Whether text is painted: for stdout, as `anstream` decides for it; plain for text that is
/// kept (tests, snapshots).
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// No colour.
    pub const PLAIN: Self = Self { color: false };

    /// The style of text bound for stdout: in colour when `anstream` would keep its colour.
    pub fn for_stdout() -> Self {
        Self {
            color: AutoStream::choice(&std::io::stdout()) != ColorChoice::Never,
        }
    }

    fn paint(self, style: anstyle::Style, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }

    pub fn green(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default(), text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint(AnsiColor::Yellow.on_default(), text)
    }

    pub fn bold(self, text: &str) -> String {
        self.paint(anstyle::Style::new().effects(Effects::BOLD), text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint(anstyle::Style::new().effects(Effects::DIMMED), text)
    }
}

/// Prints `text` on stdout through `anstream`, which keeps its colour or strips it as stdout
/// takes it. Like `print!`, it panics when stdout fails, a closed one included: see
/// [`quiet_when_stdout_closes`].
pub fn print(text: impl Display) {
    let mut out = anstream::stdout().lock();
    if let Err(error) = write!(out, "{text}") {
        panic!("failed printing to stdout: {error}");
    }
}

/// Keeps a closed stdout quiet, as in `cargo xtask list | head`: `print!` panics when the reader
/// is gone, and this hook says nothing of that panic. On the main thread it unwinds to `main`
/// (restoring the terminal on the way), which ends with status 0 (see [`is_closed_stdout`]);
/// any other thread ends the process at once, with status 0. Other panics reach the hook that
/// was there before.
#[allow(
    clippy::disallowed_methods,
    reason = "a panic hook on another thread cannot return to main"
)]
pub fn quiet_when_stdout_closes() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload_as_str().is_some_and(is_closed_stdout) {
            previous(info);
        } else if std::thread::current().name() != Some("main") {
            std::process::exit(0);
        }
    }));
}

/// Whether a panic message is `print!`'s for a stdout whose reader is gone: "failed printing
/// to stdout: Broken pipe (os error 32)". The error is known by its code, whatever the system's
/// language made of its text.
pub fn is_closed_stdout(message: &str) -> bool {
    let Some(error) = message.strip_prefix("failed printing to stdout: ") else {
        return false;
    };
    let code = error
        .rsplit_once("(os error ")
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .and_then(|code| code.parse().ok());
    code.is_some_and(|code| is_closed_pipe(&std::io::Error::from_raw_os_error(code)))
}

/// Whether `error` says the reader of a pipe is gone.
pub fn is_closed_pipe(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::is_closed_stdout;

    #[test]
    fn a_closed_stdout_is_known_by_its_error_code() {
        // The system's own broken-pipe error, as `print!` reports it (32 on Unix, 232 on Windows).
        let broken = (1..300)
            .map(std::io::Error::from_raw_os_error)
            .find(|error| error.kind() == std::io::ErrorKind::BrokenPipe)
            .expect("the system has a broken-pipe error");
        assert!(is_closed_stdout(&format!(
            "failed printing to stdout: {broken}"
        )));
        assert!(!is_closed_stdout(&format!(
            "failed printing to stderr: {broken}"
        )));
        let other = std::io::Error::from_raw_os_error(2);
        assert!(!is_closed_stdout(&format!(
            "failed printing to stdout: {other}"
        )));
        assert!(!is_closed_stdout(
            "failed printing to stdout: formatter error"
        ));
    }
}
