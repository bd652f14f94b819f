import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { collect, messageOf } from '@parley/testing/digital-employees/test-messages';
import { defaultDigitalEmployeeFor, defaultSettingsFor } from '../default-digital-employee.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import type { DigitalEmployeeSettings } from '../digital-employees.settings.ts';
import { BuiltinResponder, replyFor, wordPieces } from './builtin.responder.ts';
import { createResponder } from './create-responder.ts';
import { greetingFor, type ReplyChunk, type RespondInput } from './responder.ts';

const company = { id: randomUUID(), name: 'Acme', allowedOrigins: [], createdAt: '2026-01-01T00:00:00.000Z' };

function employeeWith(settings: DigitalEmployeeSettings): DigitalEmployee {
  return { ...defaultDigitalEmployeeFor(company), settings, isDefault: true };
}

function inputFor(
  employee: DigitalEmployee,
  text: string,
  signal = new AbortController().signal,
): RespondInput {
  const conversationId = randomUUID();
  return {
    companyId: company.id,
    conversationId,
    digitalEmployee: employee,
    message: messageOf(conversationId, 'user', text),
    history: [],
    signal,
  };
}

// The builtin responder is pure computation plus timers: no connector, no storage. Its deps are never touched.
const noConnectors = {
  fetch: () => Promise.reject(new Error('builtin must not call out')),
  credentials: () => Promise.reject(new Error('builtin must not call out')),
};

describe('builtin responder', () => {
  const settings: DigitalEmployeeSettings = {
    greeting: 'Welcome to Acme!',
    answers: [
      {
        question: 'Opening hours?',
        keywords: ['open', 'opening hours', 'hours'],
        answer: 'We are open **9 to 5**, Monday to Friday.',
      },
      { question: 'Shipping?', keywords: ['shipping', 'delivery', 'ship'], answer: 'Shipping takes 2 days.' },
      { question: 'Hi', keywords: ['hi', 'hello'], answer: 'Hello there!' },
    ],
    fallback: 'Let me find a colleague for that.',
    word_delay_ms: 1,
  };

  it('streams the best keyword answer word by word; the pieces add up to the exact answer', async () => {
    const employee = employeeWith(settings);
    const responder = createResponder(employee, { connectors: noConnectors });
    assert.ok(responder instanceof BuiltinResponder);
    const pieces = await collect(responder.respond(inputFor(employee, 'What are your OPENING HOURS?')));
    assert.equal(pieces.join(''), 'We are open **9 to 5**, Monday to Friday.');
    assert.deepEqual(pieces, ['We ', 'are ', 'open ', '**9 ', 'to ', '5**, ', 'Monday ', 'to ', 'Friday.']);
  });

  it('matches keywords case-insensitively on word boundaries and prefers the answer with more matched words', async () => {
    assert.equal(replyFor(employeeWith(settings), 'DELIVERY to Berlin?'), 'Shipping takes 2 days.');
    // "this" contains "hi" and "shipment" contains "ship", but neither is the word.
    assert.equal(replyFor(employeeWith(settings), 'is this a shipment'), 'Let me find a colleague for that.');
    // "opening hours" (2 words) + "hours" (1) beat "hi" (1).
    assert.equal(
      replyFor(employeeWith(settings), 'hi, opening hours?'),
      'We are open **9 to 5**, Monday to Friday.',
    );
    // On a tie the first answer in the list wins.
    assert.equal(
      replyFor(employeeWith(settings), 'open for delivery'),
      'We are open **9 to 5**, Monday to Friday.',
    );
  });

  it('falls back to the configured fallback, or to a built-in one when none is set', async () => {
    const employee = employeeWith(settings);
    const pieces = await collect(
      createResponder(employee, { connectors: noConnectors }).respond(inputFor(employee, 'Quantum?')),
    );
    assert.equal(pieces.join(''), 'Let me find a colleague for that.');
    assert.match(replyFor(employeeWith({ answers: [] }), 'anything'), /don't know/);
  });

  it('is deterministic: the same message always gets the same pieces', async () => {
    const employee = employeeWith({ ...settings, word_delay_ms: 0 });
    const responder = createResponder(employee, { connectors: noConnectors });
    const first = await collect(responder.respond(inputFor(employee, 'shipping please')));
    const second = await collect(responder.respond(inputFor(employee, 'shipping please')));
    assert.deepEqual(first, second);
    assert.deepEqual(first, wordPieces('Shipping takes 2 days.'));
  });

  it('stops with responder_aborted when the signal fires mid-reply', async () => {
    const employee = employeeWith({ ...settings, word_delay_ms: 20 });
    const controller = new AbortController();
    const received: ReplyChunk[] = [];
    await assert.rejects(
      (async () => {
        for await (const piece of createResponder(employee, { connectors: noConnectors }).respond(
          inputFor(employee, 'opening hours', controller.signal),
        )) {
          received.push(piece);
          if (received.length === 2) controller.abort();
        }
      })(),
      { code: 'responder_aborted' },
    );
    assert.deepEqual(received, ['We ', 'are ']);
  });

  it('out of the box speaks for the company it serves, says what it can do, and never talks about Parley', async () => {
    const ava = employeeWith({ ...defaultSettingsFor('Acme'), word_delay_ms: 0 });
    const greeting = greetingFor(ava)!;
    assert.match(greeting, /^Hi, I'm Ava, Acme's digital assistant/);
    assert.match(greeting, /answer common questions and connect you with someone from the Acme team/);
    const reply = (
      await collect(
        createResponder(ava, { connectors: noConnectors }).respond(inputFor(ava, 'What can you do?')),
      )
    ).join('');
    assert.match(reply, /^I can answer common questions about Acme, and bring in a person from the team/);
    assert.match(replyFor(ava, 'Can I talk to a human please?'), /someone from the Acme team will pick up/);
    assert.match(replyFor(ava, 'Who are you? Are you a bot?'), /^I'm \*\*Ava\*\*, Acme's digital assistant/);
    assert.match(replyFor(ava, 'zzz'), /common questions about Acme/);
    const everything = JSON.stringify(ava.settings);
    assert.doesNotMatch(
      everything,
      /parley|connector|webhook|openai|self-host/i,
      'nothing about the software',
    );
    assert.equal(greetingFor(employeeWith({})), null);
  });
});
