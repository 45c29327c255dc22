//! RC transport: queue pairs as sans-I/O state machines over `IbRepr`.
//! (Being written; see the transport work item.)
