"""The results pages' plots: stamped with their records' and code's digest; curves aligned."""

from benchmarks.pages import exploration_figures, learning_page, plots


def _draw(path, data):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 2))
    figure.add_subplot().plot([point[0] for point in data[0]["curve"]], [0.5])
    return plots.save(figure, str(path))


def _draw_wider(path, data):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    figure.add_subplot().plot([point[0] for point in data[0]["curve"]], [0.5])
    return plots.save(figure, str(path))


def test_a_plot_is_stale_until_drawn_from_its_records_and_again_when_they_change(tmp_path):
    path = tmp_path / "curve.png"
    records = [{"seed": 0, "curve": [[1, 0.5]]}]
    plot = plots.Plot(str(path), records, lambda: _draw(path, records), code=(_draw,))
    assert plots.stale([plot]) == [plot]  # No file yet.
    assert plot.draw() == str(path)
    assert plots.stamp(str(path)) == plots.digest(records, (_draw,))
    assert plots.stale([plot]) == []
    changed = [{"seed": 0, "curve": [[1, 0.6]]}]
    assert plots.stale([plot._replace(data=changed)]) != []


def test_a_plot_is_stale_when_the_code_that_draws_it_changes(tmp_path):
    from PIL import Image

    path = tmp_path / "curve.png"
    records = [{"seed": 0, "curve": [[1, 0.5]]}]
    plot = plots.Plot(str(path), records, lambda: _draw(path, records), code=(_draw,))
    plot.draw()
    wider = plot._replace(render=lambda: _draw_wider(path, records), code=(_draw_wider,))
    assert plots.stale([wider]) == [wider]  # Same records, other drawing code.
    wider.draw()
    assert plots.stale([wider]) == [] and plots.stale([plot]) == [plot]
    with Image.open(path) as image:
        assert image.size == (300, 200)  # The stamp was written into the redrawn figure.


def test_a_png_without_a_stamp_is_stale(tmp_path):
    from matplotlib.figure import Figure

    path = tmp_path / "plain.png"
    Figure(figsize=(2, 2)).savefig(path)
    assert plots.stamp(str(path)) is None
    plot = plots.Plot(str(path), [], lambda: str(path))
    assert plots.stale([plot]) == [plot]


def test_the_digest_ignores_key_order_and_tells_values_apart():
    assert plots.digest({"a": 1, "b": [1.5, 2]}) == plots.digest({"b": [1.5, 2], "a": 1})
    assert plots.digest({"a": 1}) != plots.digest({"a": 2})
    assert plots.digest({"a": 1}, (_draw,)) != plots.digest({"a": 1}, (_draw_wider,))
    assert len(plots.digest([])) == 16


def test_seeds_reporting_at_different_steps_are_aligned_on_the_steps_any_reports():
    # Seed b skips the report at 20 (no episode ended in that window) and runs past seed a's end.
    a = [[10, 0.1], [20, 0.2], [30, 0.3]]
    b = [[10, 0.5], [30, 0.7], [40, 0.9]]
    steps, rows = exploration_figures.aligned([a, b])
    assert steps == [10, 20, 30]  # Up to 30, the last step both reach.
    assert rows == [[0.1, 0.2, 0.3], [0.5, 0.5, 0.7]]  # b holds 0.5 through 20.


def test_a_curve_starting_late_holds_its_first_report_before_it():
    steps, rows = exploration_figures.aligned([[[5, 0.0], [10, 1.0]], [[10, 0.4]]])
    assert steps == [5, 10]
    assert rows == [[0.0, 1.0], [0.4, 0.4]]


def test_aligned_scores_equal_a_slow_reference_on_random_curves():
    import numpy as np

    generator = np.random.default_rng(0)
    curves = []
    for _ in range(3):
        at = np.sort(generator.choice(np.arange(1, 100), size=20, replace=False))
        curves.append([[int(s), float(generator.random())] for s in at])
    steps, rows = exploration_figures.aligned(curves)
    end = min(c[-1][0] for c in curves)
    assert steps == sorted({s for c in curves for s, _ in c if s <= end})
    for curve, row in zip(curves, rows, strict=True):
        for step, value in zip(steps, row, strict=True):
            before = [score for at, score in curve if at <= step]
            assert value == (before[-1] if before else curve[0][1])


def test_learning_plots_are_drawn_from_the_newest_sitting_whose_records_hold_curves(tmp_path):
    def record(started, task, seed, curve=None):
        run = dict(started=started, task=task, seed=seed, eval_mean=1.0, env_steps=20)
        return run if curve is None else dict(run, curve=curve)

    records = [
        record("2026-01-01 10:00:00", "pendulum", 0, [[10.0, -900.0], [20.0, -300.0]]),
        record("2026-02-01 10:00:00", "pendulum", 0, [[10.0, -800.0], [20.0, -200.0]]),
        record("2026-02-01 10:00:00", "pendulum", 1, [[10.0, -700.0], [20.0, -250.0]]),
        record("2026-02-01 10:00:00", "cartpole", 0),  # Kept no curve: nothing to draw.
    ]
    (plot,) = learning_page.plots(records, str(tmp_path))
    assert plot.path == str(tmp_path / "learning_pendulum.png")
    assert [run["seed"] for run in plot.data] == [0, 1]  # The newest sitting's seeds.
    assert plots.stale([plot]) == [plot]
    assert plot.draw() == plot.path
    assert plots.stale([plot]) == []
