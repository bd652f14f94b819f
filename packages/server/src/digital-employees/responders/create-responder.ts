import type { DigitalEmployee } from '../digital-employees.service.ts';
import { BuiltinResponder } from './builtin.responder.ts';
import { OpenAiResponder } from './openai.responder.ts';
import type { Responder, ResponderDeps } from './responder.ts';
import { WebhookResponder } from './webhook.responder.ts';

/** The responder that answers for a digital employee. Cheap to build: create one per reply. */
export function createResponder(employee: DigitalEmployee, deps: ResponderDeps): Responder {
  switch (employee.responder) {
    case 'builtin':
      return new BuiltinResponder(employee, deps.knowledge);
    case 'webhook':
      return new WebhookResponder(employee, deps.connectors);
    case 'openai':
      return new OpenAiResponder(employee, deps.connectors, deps.knowledge, deps.actions);
  }
}
