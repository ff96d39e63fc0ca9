//! Checks of `answer`.

#[test]
fn is_42() {
    let answer = exercise::answer();
    assert_eq!(answer, 42, "the answer must be 42; yours was {answer}");
}
