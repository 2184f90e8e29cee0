import { extractToolCalls } from '@/utils/toolcalls';

// Answers {type: "extract-tool-calls", text, allowed} with {verdict: "<the parser's text>"}.
// extparity-unreachable: WXT wraps this call in its start-up code, whose branches for a main()
// that returns a promise or throws run only when the background fails to start
export default defineBackground(() => {
  browser.runtime.onMessage.addListener((message: any, _sender, sendResponse) => {
    if (message?.type === 'extract-tool-calls') {
      sendResponse({ verdict: extractToolCalls(message.text, message.allowed) });
    }
    return false;
  });
});
