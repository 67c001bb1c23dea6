// Placeholder so the target has a source file; removed once real tests land.
