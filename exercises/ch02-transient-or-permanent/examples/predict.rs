//! Predict, then run: a 503 that asks for two seconds, a connection reset, then a 404.
//!
//! Write down your prediction first: how many calls, how much (virtual) time, and which error
//! comes back? Then run `cargo run -p ch02_transient_or_permanent --example predict`.

use ch02_transient_or_permanent::stubs::ScriptedService;
use ch02_transient_or_permanent::{CallError, classify, retry_transient};
use std::io::ErrorKind;
use std::time::Duration;
use tokio::time::Instant;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let service = ScriptedService::failing_with([
        CallError::Http {
            status: 503,
            retry_after: Some(Duration::from_secs(2)),
        },
        CallError::Io(ErrorKind::ConnectionReset),
        CallError::http(404),
    ]);
    let started = Instant::now();
    let result = retry_transient(5, || service.call(), classify).await;
    println!("result:       {result:?}");
    println!("calls:        {}", service.calls());
    println!("virtual time: {:?}", started.elapsed());
}
