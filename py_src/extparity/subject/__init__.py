"""The extension under test, read from disk: its module graph linked into scripts (``linker``),
its trees and manifests (``tree_checks``), Mozilla's lint (``weblint``) and its release
metadata (``release``)."""
