//! Parse Prometheus text exposition format (probe memory source).
