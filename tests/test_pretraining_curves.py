import pandas as pd

from pretraining.curves import plot_curves


def test_plot_is_written_from_a_training_log(tmp_path):
    log = pd.DataFrame({
        "step": [10, 20, 30], "equations": [640, 1280, 1920], "train_loss": [3.0, 2.5, 2.2],
        "val_loss": [None, 2.6, None], "val_accuracy": [None, 0.4, None],
    })
    log.to_csv(tmp_path / "log.csv", index=False)
    plot_curves(tmp_path / "log.csv", tmp_path / "figures" / "curve.png", title="run")
    png = (tmp_path / "figures" / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
