//! One grading as the two planners receive it: the grader's hidden checks (`grader`) and a
//! learner's suite (`suites`) both start from a [`Request`] and an empty report.

use crate::build::harness::Graded;

use crate::build::compile::BuildOptions;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, display_path};
use crate::report::model::Report;

/// One grading, as the two planners (hidden checks, learner suites) receive it.
pub struct Request<'a> {
    pub workbook: &'a Workbook,
    pub chapter: &'a Chapter,
    pub rubric: &'a Rubric,
    pub graded: &'a Graded,
    pub build: BuildOptions,
    pub visible_tests: bool,
}

/// The report of `graded` for `chapter`, before anything has run.
pub fn start_report(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    graded: &Graded,
) -> Report {
    Report::empty(
        chapter,
        graded.label.clone(),
        display_path(workbook, &graded.dir),
        workbook.root.display().to_string(),
        rubric.max_points(),
    )
}
