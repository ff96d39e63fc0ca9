//! The whole kit of book §5.7, run against your `Retry`: four scenarios on tokio's paused clock,
//! each printed as the timeline table the book shows.
//!
//!     cargo run -p ch05_retry_loop --example kit
//!
//! Compare what it prints with the tables of §5.7: they were printed by the same code running
//! against the reference solution. With `-- --careless` it prints the table of §5.4's
//! prediction instead.

use ch05_retry_loop as workbook;

include!("scenarios.rs");

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    if std::env::args().any(|arg| arg == "--careless") {
        print!("{}", careless().await);
    } else {
        print!("{}", timelines().await);
    }
}
