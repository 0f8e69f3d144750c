/*
 * sequence.mjs - one call of every browser tool, in an order that lets
 * each succeed on the fixture site: the sequence tests/replay/record.mjs
 * records on real Chromium and tests/integration/pipeline_steps*.test.mjs
 * replay (on the recording, or on Chromium again).
 *
 *   runSequence(call, url): call(tool, args, {mayFail}) returns the
 *   CallToolResult (of a call expected to succeed unless mayFail: the
 *   click that opens an alert); url(path) is the fixture site's URL.
 */
import { textOf, findRef, sc } from '../e2e/lib.mjs';

export async function runSequence(call, url) {
  await call('browser_navigate', { url: url('/form.html') });
  const form = textOf(await call('browser_snapshot', {}));
  await call('browser_type', { target: findRef(form, 'textbox', 'Name'), text: 'Ada' });
  await call('browser_select_option', { target: findRef(form, 'combobox', 'Country'), values: ['fr'] });
  await call('browser_hover', { target: findRef(form, 'button', 'Save') });
  await call('browser_press_key', { key: 'Tab' });
  await call('browser_evaluate', { function: '() => document.title' });
  await call('browser_take_screenshot', {});
  await call('browser_wait_for', { text: 'Account settings' });
  await call('browser_click', { target: findRef(form, 'link', 'Go to the second page') });
  await call('browser_navigate_back', {});
  await call('browser_navigate', { url: url('/interact/fill-form.html') });
  await call('browser_fill_form', {
    fields: [
      { name: 'Full name', type: 'textbox', target: '#name', value: 'Ada' },
      { name: 'I accept the terms', type: 'checkbox', target: '#terms', value: 'true' },
      { name: 'Country', type: 'combobox', target: '#country', value: 'Japan' },
    ],
  });
  await call('browser_find', { text: 'Postcode' });
  await call('browser_resize', { width: 1024, height: 700 });
  await call('browser_emulate_media', { colorScheme: 'dark' });
  await call('browser_emulate', { userAgent: 'Mozilla/5.0 glassbox-replay/1.0', cpuThrottlingRate: 2 });
  await call('browser_navigate', { url: url('/interact/drag.html') });
  await call('browser_drag', { startTarget: '#card-a', endTarget: '#done' });
  await call('browser_navigate', { url: url('/dialogs.html') });
  const dialogs = textOf(await call('browser_snapshot', {}));
  const opened = await call('browser_click', { target: findRef(dialogs, 'button', 'Show notice') }, { mayFail: true });
  if (!sc(opened).dialog_open && !sc(opened).dialogs?.length) throw new Error('the alert did not open');
  await call('browser_handle_dialog', { accept: true });
  await call('browser_tabs', { action: 'list' });
  await call('browser_session', { action: 'status' });
  // the files tools (docs/files.md), without files of the upload area
  await call('browser_navigate', { url: url('/files/console.html') });
  await call('browser_wait_for', { text: 'loaded' });
  await call('browser_console_messages', {});
  const listed = await call('browser_network_requests', { static: true });
  await call('browser_network_request', { index: sc(listed).requests[0].index, part: 'request-headers' });
  await call('browser_navigate', { url: url('/files/upload.html') });
  await call('browser_file_upload', { target: '#doc' });
  await call('browser_navigate', { url: url('/files/drop.html') });
  await call('browser_drop', { target: '#zone', data: { 'text/plain': 'dropped' } });
  await call('browser_close', {});
}
