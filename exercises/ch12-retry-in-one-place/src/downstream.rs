//! Given: the one interface of the stack. Every layer implements it, and every layer calls the
//! layer below through it, down to the backend.

use std::future::Future;

use crate::CallError;

/// Something a layer can call: the next layer down, or the backend itself.
pub trait Downstream {
    /// Handles one request. `Ok` carries the number of the backend call that answered it.
    fn call(&self) -> impl Future<Output = Result<u32, CallError>>;
}

/// A reference to a layer is a layer too, so a test can keep the layers it builds and ask
/// them afterwards how often they were called.
impl<D: Downstream> Downstream for &D {
    fn call(&self) -> impl Future<Output = Result<u32, CallError>> {
        (**self).call()
    }
}
