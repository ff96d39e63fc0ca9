//! Terminal styling that respects `NO_COLOR` and output that is not a terminal.

use std::io::IsTerminal;

/// Whether to colour what goes to stdout.
pub fn color_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        && std::env::var_os("CI").is_none()
        && std::io::stdout().is_terminal()
        && crate::sandbox::terminal_understands_ansi()
}

/// Styles text when colour is on, and leaves it alone otherwise.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
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

/// Removes terminal escape sequences: CSI (`ESC [ … final byte`, colours among them) and OSC
/// (`ESC ] … BEL` or `ESC ] … ESC \\`, hyperlinks among them).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for end in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&end) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(end) = chars.next() {
                    if end == '\x07' || (end == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
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
