//! Given: a cancel signal, so that something outside a retry loop can stop it.
//!
//! A saga that has run out of time, a user who closed the page, a server shutting down: whoever
//! owns the bigger job holds a clone of the token and calls [`CancelToken::cancel`]; the retry
//! loop waits on [`CancelToken::cancelled`] beside its attempt or its sleep and stops at once.

use tokio::sync::watch;

/// A cancel signal shared by clones: cancelling one clone cancels them all, for good.
///
/// Built on [`tokio::sync::watch`], which holds the latest value (`true` once cancelled), so a
/// waiter that arrives after the signal still sees it.
#[derive(Debug, Clone)]
pub struct CancelToken {
    signal: watch::Sender<bool>,
}

impl CancelToken {
    /// A token that is not cancelled yet.
    pub fn new() -> Self {
        Self {
            signal: watch::Sender::new(false),
        }
    }

    /// Cancels this token and every clone of it. Cancelling twice is harmless.
    pub fn cancel(&self) {
        self.signal.send_replace(true);
    }

    /// Whether [`CancelToken::cancel`] has been called on this token or a clone of it.
    pub fn is_cancelled(&self) -> bool {
        *self.signal.borrow()
    }

    /// Completes as soon as the token is cancelled (at once if it already is).
    ///
    /// Use it as one branch of `tokio::select!`, beside the work it should interrupt.
    pub async fn cancelled(&self) {
        let mut receiver = self.signal.subscribe();
        // `self` keeps the sender alive, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|&cancelled| cancelled).await;
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}
