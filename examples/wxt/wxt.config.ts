import { defineConfig } from 'wxt';

// WXT's defaults, with a name, Firefox's add-on id (an MV3 add-on needs one to load) and source
// maps, which let extparity report locations as lines of the TypeScript sources. `wxt zip`'s
// sources zip for Mozilla takes the whole project folder: extparity's outputs stay out of it.
export default defineConfig({
  vite: () => ({ build: { sourcemap: true } }),
  zip: { excludeSources: ['dist/**', 'out/**'] },
  manifest: {
    name: 'Tool Call Parser (WXT)',
    description: 'Finds tool calls in a model response and keeps the allowed ones.',
    browser_specific_settings: { gecko: { id: 'wxt-example@extparity.test' } },
  },
});
