//! Pins the tables of book §5.4 and §5.7 with insta snapshots. The scenarios themselves are the
//! worked example of the exercise crate (`examples/kit/scenarios.rs`), included here so that the
//! tables on the page are what that code does with the reference `Retry`.

use crate as workbook;

include!("../../../exercises/ch05-retry-loop/examples/kit/scenarios.rs");

#[tokio::test(start_paused = true)]
async fn timelines_of_the_kit() {
    insta::assert_snapshot!("timelines", timelines().await);
}

#[tokio::test(start_paused = true)]
async fn careless_policy() {
    insta::assert_snapshot!("careless", careless().await);
}
