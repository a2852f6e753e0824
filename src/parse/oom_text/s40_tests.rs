//! Unit tests of wordings added in session 40: a lower-case `oom` that a reporter's title ends on
//! after `still` or an adverb of time.

use super::*;

/// Wan2.2 issue (s2v on 8 cards): the title says the job still ran out of memory after the
/// generation, the traceback below is cut before its message.
#[test]
fn a_title_ending_on_still_oom_finally_is_a_report() {
    let messages = parse_text("# s2v, 8*5090 generate done, but still oom finally\n");
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].is_gpu_oom);
    let again = parse_text("Tried batch size 1 on the A100, it still oom with the 14B model\n");
    assert_eq!(again.len(), 1, "{again:#?}");
}

/// The word inside another word, or a room named: no report.
#[test]
fn a_room_or_zoom_finally_is_not_a_report() {
    for text in [
        "# we still zoom finally\n",
        "The meeting room finally\n",
        "we still have room\n",
    ] {
        assert!(parse_text(text).is_empty(), "{text}");
    }
}
