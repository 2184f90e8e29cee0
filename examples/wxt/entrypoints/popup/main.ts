// The popup asks the background, as every caller of the parser does.
const text = document.querySelector<HTMLTextAreaElement>('#text')!;
const out = document.querySelector<HTMLPreElement>('#verdict')!;

text.addEventListener('input', async () => {
  const reply = await browser.runtime.sendMessage({
    type: 'extract-tool-calls',
    text: text.value,
    allowed: ['open', 'click'],
  });
  out.textContent = reply?.verdict ?? '';
});
