//! Secrets and private paths removed before anything is rendered or diffed (R16).
