//! Cargo's and rustc's JSON messages, read into what a learner needs: each compiler error with
//! its file and line (relative to the graded crate when it is the learner's), whether the error is
//! the learner's code or the checks', and paths shortened in the rendered text.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::build::harness::Graded;
use crate::curriculum::workbook::Workbook;
use crate::report::model::CompileError;

#[derive(Deserialize)]
pub struct CargoMessage {
    pub reason: String,
    #[serde(default)]
    pub package_id: String,
    #[serde(default)]
    pub target: Option<CargoTarget>,
    #[serde(default)]
    pub executable: Option<PathBuf>,
    #[serde(default)]
    pub filenames: Vec<PathBuf>,
    #[serde(default)]
    pub manifest_path: Option<PathBuf>,
    #[serde(default)]
    pub message: Option<RustcMessage>,
}

#[derive(Deserialize)]
pub struct CargoTarget {
    pub name: String,
    #[serde(default)]
    pub kind: Vec<String>,
}

#[derive(Deserialize)]
pub struct RustcMessage {
    pub message: String,
    pub level: String,
    #[serde(default)]
    pub rendered: Option<String>,
    #[serde(default)]
    pub spans: Vec<RustcSpan>,
}

impl RustcMessage {
    /// An error the learner is shown: not a warning, and not rustc's closing count.
    pub fn is_reported_error(&self) -> bool {
        self.level.starts_with("error") && !self.message.starts_with("aborting due to")
    }
}

#[derive(Deserialize)]
pub struct RustcSpan {
    pub file_name: String,
    pub line_start: u64,
    pub is_primary: bool,
}

/// True when a failed build's errors are about the code: each has a place in a file, and none
/// is about finding a compiled dependency. Anything else (a dependency gone or rebuilt, the
/// linker) is cargo's to sort out.
pub fn is_code_failure(errors: &[CompileError]) -> bool {
    const LOADING_ERRORS: &[&str] = &[
        "can't find crate",
        "found possibly newer version of crate",
        "found crate",
        "couldn't read",
        "linking with",
        "could not compile",
    ];
    !errors.is_empty()
        && errors.iter().all(|error| {
            error.file.is_some()
                && !LOADING_ERRORS
                    .iter()
                    .any(|loading| error.message.contains(loading))
        })
}

/// True when the error's primary span is in a file the learner writes: the graded crate or the
/// visible tests compiled beside the checks.
pub fn is_learners_file(graded: &Graded, diagnostic: &RustcMessage) -> bool {
    diagnostic
        .spans
        .iter()
        .find(|span| span.is_primary)
        .is_some_and(|span| {
            let file = Path::new(&span.file_name);
            file.starts_with(&graded.dir)
                || file.starts_with(&graded.visible_tests)
                || graded
                    .copy
                    .as_ref()
                    .is_some_and(|copy| file.starts_with(copy))
        })
}

pub fn compile_error(
    workbook: &Workbook,
    graded: &Graded,
    diagnostic: RustcMessage,
    in_graded_crate: bool,
) -> CompileError {
    let primary = diagnostic.spans.iter().find(|span| span.is_primary);
    CompileError {
        file: primary.map(|span| shorten_paths(workbook, graded, &span.file_name)),
        line: primary.map(|span| span.line_start),
        message: diagnostic.message,
        rendered: shorten_paths(
            workbook,
            graded,
            diagnostic.rendered.as_deref().unwrap_or_default(),
        ),
        in_graded_crate,
    }
}

/// Replaces absolute paths by paths relative to the graded crate or the workspace.
pub fn shorten_paths(workbook: &Workbook, graded: &Graded, text: &str) -> String {
    let separator = std::path::MAIN_SEPARATOR;
    let graded_prefix = format!("{}{separator}", graded.dir.display());
    let root_prefix = format!("{}{separator}", workbook.root.display());
    let graded_relative = graded
        .dir
        .strip_prefix(&workbook.root)
        .map(|relative| format!("{}{separator}", relative.display()))
        .unwrap_or_default();
    let text = match &graded.copy {
        Some(copy) => text.replace(
            &format!("{}{separator}", copy.display()),
            &format!("{graded_prefix}src{separator}"),
        ),
        None => text.to_owned(),
    };
    text.replace(&graded_prefix, &graded_relative)
        .replace(&root_prefix, "")
}
