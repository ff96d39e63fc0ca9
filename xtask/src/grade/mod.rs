//! Grading: the grader plans a chapter's checks (or a learner's suite, under its rules), has
//! `build` compile them, runs them through the sandboxed runner and maps the outcomes onto the
//! rubric as a `report::model::Report`.

pub mod grader;
pub mod request;
pub mod runner;
pub mod suite_rules;
pub mod suites;
