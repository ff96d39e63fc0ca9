//! Grading a whole class: every student's copy graded in its own sandboxed process, results kept
//! per student so an interrupted run resumes, reports from CI runners merged, and the class's
//! results written as a gradebook CSV, a versioned JSON report and a self-contained HTML page.

pub mod book_links;
pub mod cleanup;
pub mod fingerprint;
pub mod gradebook;
pub mod html;
pub mod model;
pub mod pool;
pub mod progress_bar;
pub mod reports;
pub mod roster;
pub mod stamp;
pub mod store;
pub mod time;
