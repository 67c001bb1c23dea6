/// TidingsKecalek: incremental message sync for the Kecalek encrypted messenger.
public enum TidingsKecalek {}
