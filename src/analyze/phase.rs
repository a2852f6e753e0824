//! Analyse the failure phase from the timeline (R5–R8).
