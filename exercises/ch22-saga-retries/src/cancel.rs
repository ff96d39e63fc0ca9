//! Given: a cancel signal, so that whoever owns the saga can stop it from outside.

use tokio::sync::watch;

/// A cancel signal shared by clones: cancelling one clone cancels them all, for good.
///
/// The Rust counterpart of an abort signal. Built on [`tokio::sync::watch`], which keeps the
/// latest value, so a waiter that arrives after the signal still sees it.
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
