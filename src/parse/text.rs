//! Parse cleaning messy log text: ANSI escapes, carriage returns, rank/container prefixes.
