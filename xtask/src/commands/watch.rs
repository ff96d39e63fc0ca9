//! `cargo xtask watch [chapter]`: re-grade on every save. It looks at the exercise's files (their
//! size and modification time) every 20 ms, which works on every file system (including the
//! container and network mounts where file events never arrive), costs about 50 µs a look for a
//! crate this size, and adds at most 20 ms, plus 20 ms for the save to settle, to the verdict.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow};
use clap::Args;

use crate::build::compile::BuildOptions;
use crate::commands::{check, hint, list, reset};
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::grade::grader::{Grader, Target};
use crate::lang::words;
use crate::progress::Progress;
use crate::report::text;
use crate::sandbox::{self, RawTerminal};
use crate::status;
use crate::term::{self, Style};

/// How often the exercise's files are looked at.
pub const POLL: Duration = Duration::from_millis(20);

/// How long the files must stay the same after a change before they are graded. An editor's save
/// takes its few steps within a millisecond or two; a step that comes later is another change,
/// which the next look sees and grades again.
pub const SETTLE: Duration = Duration::from_millis(5);

/// Re-check a chapter every time you save (keys: h hint, l list, c check, q quit).
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The chapter, e.g. ch08 (default: the first chapter you have not passed yet).
    pub chapter: Option<String>,
}

/// A key the learner pressed.
enum Key {
    Hint,
    List,
    Check,
    /// The end of input: the keys are gone (quit keys stop the watch themselves).
    Quit,
}

pub fn run(args: WatchArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = match &args.chapter {
        Some(id) => workbook.ready_chapter(id)?.clone(),
        None => match Progress::load(&workbook).next_chapter(&workbook) {
            Some(chapter) => chapter.clone(),
            None => {
                println!("{}", words::t(words::Key::EveryChapterPasses));
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let style = Style::for_stdout();
    // Before the terminal goes raw: a stop restores it on every way out.
    let id = chapter.id.clone();
    sandbox::end_on_stop(move || say_goodbye(&id));
    let _raw = RawTerminal::enable();
    // Keys come from a terminal only: an editor's task runner or `</dev/null` gives no keys, and
    // its end of input is no request to stop.
    let keys = std::io::stdin().is_terminal().then(read_keys);
    let footer = match keys {
        Some(_) => words::t(words::Key::WatchKeys),
        None => words::t(words::Key::WatchNoKeys),
    };
    let watched = workbook.exercise_dir(&chapter);
    let mut seen = snapshot(&watched);
    check_now(&workbook, &chapter, style, footer);
    loop {
        match next_key(keys.as_ref()) {
            Some(Key::Quit) => return Ok(ExitCode::SUCCESS),
            Some(Key::Hint) => {
                hint::reveal(&workbook, Some(&chapter.id), false)?;
            }
            Some(Key::List) => {
                term::print(list::render(&workbook, &Progress::load(&workbook), style))
            }
            Some(Key::Check) => check_now(&workbook, &chapter, style, footer),
            None => {}
        }
        let now = snapshot(&watched);
        if now != seen {
            seen = settled(&watched, now);
            check_now(&workbook, &chapter, style, footer);
        }
    }
}

/// The key pressed within the next look's wait, if any; without keys, only the wait.
fn next_key(keys: Option<&Receiver<Key>>) -> Option<Key> {
    let Some(keys) = keys else {
        std::thread::sleep(POLL);
        return None;
    };
    match keys.recv_timeout(POLL) {
        Ok(key) => Some(key),
        Err(RecvTimeoutError::Timeout) => None,
        // The reader ends only after it sent `Quit`.
        Err(RecvTimeoutError::Disconnected) => Some(Key::Quit),
    }
}

fn check_now(workbook: &Workbook, chapter: &Chapter, style: Style, footer: &str) {
    // Clear the screen and move to the top, as a terminal would for a fresh run.
    if style.color {
        term::print(term::CLEAR_SCREEN);
    }
    let grader = Grader {
        build: BuildOptions {
            color: style.color,
            show_progress: std::io::stderr().is_terminal(),
            ..BuildOptions::default()
        },
        ..Grader::new(workbook)
    };
    let result = match reset::broken_manifest(workbook, chapter) {
        Some(broken) => Err(anyhow!(
            "{}",
            words::tf(words::Key::CannotBeGraded, &[&chapter.id, &broken])
        )),
        None => grader.grade(chapter, &Target::Exercise),
    };
    match result {
        Ok(mut result) => {
            crate::report::book_lang::localize(workbook, &mut result);
            term::print(check::departures(&grader, chapter, style));
            term::print(text::render(&result, style, text::Layout::Brief));
            if let Err(error) = Progress::record(workbook, chapter, &result) {
                eprintln!(
                    "{}",
                    words::tf(words::Key::ProgressNotSaved, &[&format!("{error:#}")])
                );
            }
            if result.passed {
                println!("\n{}", words::tf(words::Key::WatchPasses, &[&chapter.id]));
            }
        }
        Err(error) => eprintln!(
            "{}",
            words::tf(words::Key::ErrorPrefix, &[&format!("{error:#}")])
        ),
    }
    term::print(format_args!("\n{}\n", style.dim(footer)));
}

/// The files once two looks in a row, `SETTLE` apart, see them the same: editors save in several
/// steps (write a temporary file, rename it, touch a backup).
pub fn settled(dir: &Path, mut last: Snapshot) -> Snapshot {
    loop {
        std::thread::sleep(SETTLE);
        let now = snapshot(dir);
        if now == last {
            return now;
        }
        last = now;
    }
}

/// Modification time and size of each file of a crate.
pub type Snapshot = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

/// Modification times and sizes of every file below `dir` (outside `target/`).
pub fn snapshot(dir: &Path) -> Snapshot {
    let files = crate::util::files_under(dir, &["target"]).unwrap_or_default();
    files
        .into_iter()
        .filter_map(|path| {
            let meta = std::fs::metadata(&path).ok()?;
            Some((path, (meta.modified().ok(), meta.len())))
        })
        .collect()
}

/// The last line of a watch stopped with Ctrl-C or the quit key, which ends it at once, a
/// grading under way included.
fn say_goodbye(chapter: &str) {
    // A live status line (a compile under way) is cleared first.
    status::say(status::Mode::for_stderr(true), "");
    println!("{}", words::tf(words::Key::WatchStopped, &[&chapter]));
}

/// Keys from stdin, a terminal, one at a time. Ctrl-C (a key, as the terminal is raw) and the
/// quit keys stop the watch at once, a grading under way included.
fn read_keys() -> Receiver<Key> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdin.read(&mut byte) {
            let key = match byte[0].to_ascii_lowercase() {
                b'h' => Key::Hint,
                b'l' => Key::List,
                b'c' | b'\r' | b'\n' => Key::Check,
                3 => {
                    sandbox::interrupt();
                    continue;
                }
                b'q' | 4 => {
                    sandbox::quit();
                    continue;
                }
                _ => continue,
            };
            if sender.send(key).is_err() {
                break;
            }
        }
        let _ = sender.send(Key::Quit);
    });
    receiver
}
