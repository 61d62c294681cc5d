import pandas as pd

from pretraining.curves import main, plot_curves


def test_plot_is_written_from_a_training_log(tmp_path):
    log = pd.DataFrame(
        {
            "step": [10, 20, 30],
            "equations": [640, 1280, 1920],
            "train_loss": [3.0, 2.5, 2.2],
            "val_loss": [None, 2.6, None],
            "val_accuracy": [None, 0.4, None],
        }
    )
    log.to_csv(tmp_path / "log.csv", index=False)
    plot_curves(tmp_path / "log.csv", tmp_path / "figures" / "curve.png", title="run")
    png = (tmp_path / "figures" / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_comparison_plot_from_several_logs_on_the_command_line(tmp_path):
    for name, losses in (("a", [2.6, 2.0]), ("b", [2.4, 1.8])):
        (tmp_path / name).mkdir()
        pd.DataFrame(
            {
                "step": [10, 20],
                "equations": [640, 1280],
                "elapsed_seconds": [5.0, 10.0],
                "train_loss": [3.0, 2.5],
                "val_loss": losses,
                "val_accuracy": [0.4, 0.5],
            },
        ).to_csv(tmp_path / name / "log.csv", index=False)
    out = tmp_path / "compare.png"
    main([f"tiny={tmp_path / 'a' / 'log.csv'}", str(tmp_path / "b" / "log.csv"), str(out), "--x", "elapsed_seconds"])
    png = out.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
