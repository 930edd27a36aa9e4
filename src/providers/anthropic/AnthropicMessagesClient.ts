import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';

/**
 * .what = the SDK's base client with only the Messages API attached, as the SDK allows for slim clients
 * .why = the claude atom calls messages.create and nothing else; the full client also loads every other resource (beta,
 *        files, models, …): in the bundled CLI this one's chunk is about 190 KB instead of 600 KB. Imported only when the
 *        atom makes its first call
 */
export class AnthropicMessagesClient extends BaseAnthropic {
  messages: Messages = new Messages(this);
}
