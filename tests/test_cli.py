import numpy as np
import pandas as pd
import pytest
import sympy

from nesymres_sklearn.cli import example_data, main


def test_example_prints_the_equation_and_candidates(tiny_model, capsys):
    assert main(["--example", "--model", str(tiny_model), "--beam-size", "2", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "Data: 128 points of y = x0 * sin(x1)" in out
    assert "Equation: " in out and "R^2 on the data: " in out
    assert "Top 2 candidates:" in out


def test_csv_with_named_target(tiny_model, tmp_path, capsys):
    X, y = example_data(40)
    frame = pd.DataFrame({"y": y, "speed": X[:, 0], "angle": X[:, 1]})
    frame.to_csv(tmp_path / "data.csv", index=False)
    assert main([str(tmp_path / "data.csv"), "--target", "y", "--model", str(tiny_model), "--beam-size", "2"]) == 0
    equation = capsys.readouterr().out.split("Equation: ")[1].splitlines()[0]
    assert {symbol.name for symbol in sympy.sympify(equation).free_symbols} <= {"speed", "angle"}


def test_unknown_target_column(tiny_model, tmp_path, capsys):
    pd.DataFrame({"a": np.arange(5.0), "b": np.arange(5.0)}).to_csv(tmp_path / "d.csv", index=False)
    assert main([str(tmp_path / "d.csv"), "--target", "z", "--model", str(tiny_model)]) == 2
    assert "no column 'z'" in capsys.readouterr().err


def test_a_data_source_is_required():
    with pytest.raises(SystemExit):
        main([])


def test_decoding_and_time_budget_options(tiny_model, capsys, monkeypatch):
    import nesymres_sklearn.cli as cli

    seen = {}
    original_fit = cli.NeSymReSRegressor.fit

    def recording_fit(self, X, y):
        seen.update(decoding=self.decoding, max_time=self.max_time)
        return original_fit(self, X, y)

    monkeypatch.setattr(cli.NeSymReSRegressor, "fit", recording_fit)
    argv = ["--example", "--model", str(tiny_model), "--beam-size", "2", "--decoding", "sample", "--max-time", "0.5"]
    assert main(argv) == 0
    assert seen == {"decoding": "sample", "max_time": 0.5}
    assert "Equation: " in capsys.readouterr().out
