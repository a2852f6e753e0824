//! The explainer and its report cross threads (`oomdoc run`, the exporter).

/// `oomdoc run` follows a child's log on its own thread.
#[test]
fn explainer_and_report_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<super::Explainer>();
    assert_send::<crate::model::explain::ExplainReport>();
}
