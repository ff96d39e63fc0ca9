//! A worked example on a neighbouring problem: classifying gRPC status codes.
//!
//! gRPC does not use HTTP statuses for its errors; a call ends with one of seventeen status codes,
//! and the server may add a pushback delay. The same question sorts them: would the very same
//! call succeed if it were sent again a little later? The classifier below answers it for gRPC,
//! and `retry_transient`, yours, drives a scripted gRPC service with it.
//!
//! Run it once your exercise passes: `cargo run -p ch02_transient_or_permanent --example grpc`.

use std::cell::Cell;
use std::time::Duration;

use ch02_transient_or_permanent::{Retryability, retry_transient};
use tokio::time::Instant;

// ANCHOR: code
/// The status codes of gRPC (all but `Ok`), from the gRPC documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
}

/// A failed gRPC call: its code, and the server's pushback delay if it sent one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GrpcError {
    code: Code,
    pushback: Option<Duration>,
}
// ANCHOR_END: code

// ANCHOR: classify_grpc
/// The verdict on a gRPC error. Only codes that describe a passing condition are retried;
/// a pushback from the server refines such a verdict and is ignored on any other.
fn classify_grpc(failure: &GrpcError) -> Retryability {
    let passing = matches!(
        failure.code,
        // The service cannot take the call right now: the one code gRPC documents as retryable.
        Code::Unavailable
            // This attempt ran out of time (and may still have happened on the server).
            | Code::DeadlineExceeded
            // A quota or a rate limit was hit: the request is fine, it came too soon.
            | Code::ResourceExhausted
    );
    match (passing, failure.pushback) {
        (false, _) => Retryability::Permanent,
        (true, None) => Retryability::Transient,
        (true, Some(delay)) => Retryability::After(delay),
    }
}
// ANCHOR_END: classify_grpc

fn failing(code: Code, pushback: Option<Duration>) -> GrpcError {
    GrpcError { code, pushback }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: drive
    let script = [
        failing(Code::ResourceExhausted, Some(Duration::from_millis(1_500))),
        failing(Code::Unavailable, None),
        failing(Code::Aborted, Some(Duration::from_secs(9))),
    ];
    let calls = Cell::new(0);
    let started = Instant::now();
    let result = retry_transient(
        5,
        || {
            let call = calls.get();
            calls.set(call + 1);
            async move {
                script
                    .get(call)
                    .map_or(Ok("answer"), |failure| Err(*failure))
            }
        },
        classify_grpc,
    )
    .await;
    // ANCHOR_END: drive
    println!("result:       {result:?}");
    println!("calls:        {}", calls.get());
    println!("virtual time: {:?}", started.elapsed());
    for code in [
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::FailedPrecondition,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::DataLoss,
        Code::Unauthenticated,
    ] {
        assert_eq!(
            classify_grpc(&failing(code, Some(Duration::from_secs(1)))),
            Retryability::Permanent
        );
    }
    for code in [
        Code::Unavailable,
        Code::DeadlineExceeded,
        Code::ResourceExhausted,
    ] {
        assert_eq!(classify_grpc(&failing(code, None)), Retryability::Transient);
    }
}
