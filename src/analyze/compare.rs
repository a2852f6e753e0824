//! Analyse a failing and a working run compared field by field (R17).
