"""Writing the law: everything that turns a fitted row into the printed equation (the
writer and the selected row written, readable constants, folding, signs, the features'
symbols and exports, the rounded display)."""
