"""A modelled score is called confirmed only where the GPU calibration backs it."""

from tutor.coach.calibration import judged, load

RECORD = {"card": "H100 SXM", "tasks": {"softmax": {"confirmed_up_to": 30.0}},
          "unconfirmed_bounds": ["issue"]}


def kernel(bound, seconds=1e-5):
    return {"name": "k", "bound": bound, "seconds": seconds}


def test_a_score_within_what_the_gpu_confirmed_is_calibrated():
    label, text, unconfirmed = judged("softmax", 12.0, [kernel("latency")], RECORD)
    assert label == "modelled; calibrated" and not unconfirmed and "H100 SXM" in text


def test_a_bound_the_gpu_contradicted_is_unconfirmed():
    # the model placed issue-bound kernels faster than naive that the GPU measured slower
    label, text, unconfirmed = judged("softmax", 3.0, [kernel("latency", 1e-6), kernel("issue", 1e-5)], RECORD)
    assert unconfirmed and label == "modelled; unconfirmed" and "issue-bound" in text


def test_a_claim_far_past_the_largest_confirmed_speedup_is_unconfirmed():
    # a model's softmax modelled 86x where the GPU measured 14.7x: the learner must not read it as fact
    label, text, unconfirmed = judged("softmax", 86.0, [kernel("latency")], RECORD)
    assert unconfirmed and "86x" in text and "30x" in text


def test_a_slower_kernel_of_a_contradicted_bound_is_not_flagged():
    # a score below 1 claims nothing over naive: nothing to confirm
    assert judged("softmax", 0.5, [kernel("issue")], RECORD)[2] is False


def test_a_task_the_bench_never_ran_is_said_to_be_uncalibrated():
    label, text, unconfirmed = judged("scale_scored", 5.0, [kernel("latency")], RECORD)
    assert label == "modelled" and "not calibrated" in text and not unconfirmed


def test_the_shipped_record_names_its_card_and_the_tasks_it_measured():
    from tutor.coach.tasks import coaching_tasks

    record = load()
    assert record.get("card") and record.get("rows", 0) >= 40 and record.get("spearman", 0) >= 0.9
    assert not record.get("disagreements")
    tasks = set(record["tasks"])
    # every task measured, with its naive and expert kernels and the four kinds of stress at least
    assert tasks == {t.name for t in coaching_tasks()}
    assert all(entry["kernels"] >= 6 for entry in record["tasks"].values())
