//! Predict, then run (book §17.7): six orders, one poison message, a broker that fails two
//! orders for a while, and an operator who requeues too early. Write down your predictions,
//! finish the exercise, then run
//!
//!     cargo run -p ch17_dead_letters --example poison
//!
//! The database is an in-memory SQLite database and `now` is passed in, so the minute the run
//! covers takes a few milliseconds.

fn main() {
    match ch17_dead_letters::demo::poison_run() {
        Ok(tables) => print!("{tables}"),
        Err(error) => eprintln!("the run failed: {error}"),
    }
}
