//! Given: the settings a budget accepts, and the error `RetryBudget::new` returns for any other.
//!
//! The limits follow gRPC's retry throttling (proposal A6): `maxTokens` must be greater than zero
//! (grpc-go also rejects anything above 1,000), `tokenRatio` must be greater than zero, and up to
//! three decimal places are supported. So both settings are counted in thousandths.

use std::fmt;

/// The largest `max_tokens` a budget accepts.
pub const MAX_TOKENS_LIMIT: f64 = 1_000.0;

/// The smallest step a budget can count: one thousandth of a token. It is also the smallest
/// `max_tokens` and the smallest `token_ratio` a budget accepts.
pub const TOKEN_STEP: f64 = 0.001;

/// Why `RetryBudget::new` refused its settings. Each variant carries the value it refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetError {
    /// `max_tokens` is not a finite number in `[0.001, 1000]`.
    MaxTokens(f64),
    /// `token_ratio` is not a finite number of at least `0.001`.
    TokenRatio(f64),
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaxTokens(value) => write!(
                f,
                "max_tokens must be a number from {TOKEN_STEP} to {MAX_TOKENS_LIMIT}, not {value}"
            ),
            Self::TokenRatio(value) => write!(
                f,
                "token_ratio must be a finite number of at least {TOKEN_STEP}, not {value}"
            ),
        }
    }
}

impl std::error::Error for BudgetError {}
