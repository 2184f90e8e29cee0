// Helpers for code running inside a real extension's origin (Chromium page, Firefox probe).
//
// Why fetch + digest: the hashes must describe the bytes the browser itself serves for the
// modules it imports, not the files the harness thinks it shipped; a stale build, a packing
// step or a browser that rewrote files would show up as a hash mismatch.
//
// Included textually (no import) so the code stays outside the extension's own modules.
// `urlOf(path)` maps a tree-relative path to an absolute extension URL.

async function extparityHashModules(urlOf, paths) {
  const hashes = {};
  for (const path of paths) {
    const response = await fetch(urlOf(path));
    if (!response.ok) throw new Error("fetch " + path + ": HTTP " + response.status);
    const digest = await crypto.subtle.digest("SHA-256", await response.arrayBuffer());
    hashes[path] = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  return hashes;
}

// Imports the entry modules natively (the browser resolves their imports): {path: namespace}.
async function extparityImport(urlOf, paths) {
  const namespaces = {};
  for (const path of paths) {
    try {
      namespaces[path] = await import(urlOf(path));
    } catch (e) {
      // The first stack frame with a URL names the module that threw (V8 and SpiderMonkey alike).
      const frame = e && e.stack ? String(e.stack).split("\n").find((line) => line.includes("://")) : null;
      throw new Error("importing " + path + ": " + e + (frame ? " (" + frame.trim() + ")" : ""));
    }
  }
  return namespaces;
}

// Every script a document holds from the extension, as tree-relative paths: its <script>
// elements, whatever their names. Why: the scripts a document is meant to load are read
// statically; these are the ones it did. Firefox (the one browser that reads this) keeps no
// resource timing for moz-extension:// loads (checked on 153: an empty list beside a static and
// a dynamic import), so the modules a script imports are not seen here.
function extparityLoadedScripts(win, base) {
  const urls = Array.from(win.document.scripts, (script) => script.src).filter(Boolean);
  const paths = urls.filter((url) => url.startsWith(base)).map((url) => decodeURI(url.slice(base.length).split(/[?#]/)[0]));
  return [...new Set(paths)].sort();
}
