//! Given: a stand-in for a remote service that fails with errors you choose.
//!
//! It counts its calls, so a test can ask how many attempts the retry loop made.

use std::cell::Cell;

use crate::errors::CallError;

/// A service that fails with a scripted list of errors, one per call, and then either answers
/// every later call or keeps failing with one error for ever.
#[derive(Debug)]
pub struct ScriptedService {
    script: Vec<CallError>,
    afterwards: Option<CallError>,
    calls: Cell<u32>,
}

impl ScriptedService {
    /// Fails the first calls with `errors`, in order, then answers every call.
    pub fn failing_with(errors: impl IntoIterator<Item = CallError>) -> Self {
        Self {
            script: errors.into_iter().collect(),
            afterwards: None,
            calls: Cell::new(0),
        }
    }

    /// Fails every call with `error`.
    pub fn always_failing(error: CallError) -> Self {
        Self {
            script: Vec::new(),
            afterwards: Some(error),
            calls: Cell::new(0),
        }
    }

    /// One call to the service: `Ok` with the call's number (counted from 1) once the script
    /// has run out, unless the service always fails.
    pub async fn call(&self) -> Result<u32, CallError> {
        let call = self.calls.get() + 1;
        self.calls.set(call);
        let scripted = self.script.get(call as usize - 1).copied();
        match scripted.or(self.afterwards) {
            Some(error) => Err(error),
            None => Ok(call),
        }
    }

    /// How many times [`ScriptedService::call`] has been called.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }
}
