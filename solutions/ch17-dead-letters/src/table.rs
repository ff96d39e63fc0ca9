//! The book's table of a run with a poison message (§17.7), computed by the given
//! [`crate::demo::poison_run`] on this solution and pinned with an insta snapshot that the page
//! includes (`cargo test -p ch17_dead_letters_solution table`).

#[test]
fn poison_run() {
    let table = crate::demo::poison_run().expect("the run completes");
    insta::assert_snapshot!(table);
}
