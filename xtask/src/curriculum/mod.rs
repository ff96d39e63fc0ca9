//! What the workbook is made of, read from disk: the manifest and each chapter's rubric, the
//! mutants, the record of what was shipped, and the rule that a page never shows its exercise's
//! answer (with the line lexers that rule and `sweep` use). Everything later in the pipeline reads
//! the curriculum; nothing here builds or runs code.

pub mod code_lines;
pub mod line_changes;
pub mod mutants;
pub mod shipped;
pub mod shown_answers;
pub mod translation;
pub mod workbook;
