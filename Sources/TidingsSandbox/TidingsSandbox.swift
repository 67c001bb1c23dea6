/// TidingsSandbox: in-process servers for the backends, for tests, previews and the demo.
public enum TidingsSandbox {}
