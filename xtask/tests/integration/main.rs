//! The grader's integration tests, in one binary: each module tests one part of the grader
//! through the real `xtask` binary, with the helpers of `common` (the workbook's root, the
//! binary, the fixtures, and scratch folders that clean themselves up).

mod cli;
mod common;
mod grade;
mod grade_class;
mod grader;
mod interrupt;
mod japanese;
mod launcher;
mod path_target;
mod suites;
mod workspace;
// The grader's own rule for how wide text is on a terminal.
#[path = "../../src/lang/width.rs"]
mod width;
